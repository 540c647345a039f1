import Foundation
import Strata
import StrataTesting

/// What the grammar may generate beyond its defaults, from the environment:
/// `STRATA_FUZZ_NAN=0` leaves out NaN and -0.0 constants (in by default: both evaluators refuse
/// NaN alike), `STRATA_FUZZ_NUL=1` adds NUL characters in strings (a known disagreement, off
/// by default).
let options: GeneratedPredicate.Options = {
    var options = GeneratedPredicate.Options()
    let environment = ProcessInfo.processInfo.environment
    options.includesNaNAndNegativeZero = environment["STRATA_FUZZ_NAN"] != "0"
    options.includesNULCharacters = environment["STRATA_FUZZ_NUL"] == "1"
    return options
}()

/// The store and the twins, made on the first input and reused for the next ones.
/// libFuzzer calls the entry point from one thread only, so the unchecked state is never shared.
nonisolated(unsafe) var sharedCheck: PredicateDifferentialCheck?
nonisolated(unsafe) var inputsOfSharedCheck = 0

/// Inputs per store. GRDB keeps every statement it prepared for as long as its connection
/// lives, and almost every input makes new SQL: one store for a whole run would grow by about
/// 5 KB per input and pass libFuzzer's 2 GB limit within minutes. A new store takes milliseconds.
let inputsPerCheck = 25_000

func check() -> PredicateDifferentialCheck {
    inputsOfSharedCheck += 1
    if let sharedCheck, inputsOfSharedCheck <= inputsPerCheck { return sharedCheck }
    sharedCheck = nil
    inputsOfSharedCheck = 1
    do {
        let made = try PredicateDifferentialCheck()
        sharedCheck = made
        return made
    } catch {
        // Not a finding: the fuzzer cannot run at all.
        FileHandle.standardError.write(Data("Could not make the differential store: \(error)\n".utf8))
        exit(2)
    }
}

/// libFuzzer's entry point: the input's bytes choose a format string and its arguments, which
/// must give the same objects (or the same typed error) in SQL and in memory. A disagreement
/// is reported and aborts, so that libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let predicate = GeneratedPredicate(bytes: UnsafeBufferPointer(start: data, count: size), options: options)
    let outcome = check().check(predicate)
    if !outcome.agrees {
        FileHandle.standardError.write(Data("\nSQL and memory disagree:\n\(outcome)\n".utf8))
        abort()
    }
    return 0
}

/// libFuzzer's driver, which parses the command line and runs `callback` on every input.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The executable's entry point under the name SwiftPM links as `main`: it hands over to
/// libFuzzer's driver.
@_cdecl("DifferentialFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
