import Foundation
import Strata

/// libFuzzer's entry point: every input must parse or throw, never crash or hang; a predicate
/// that parses must also survive rendering and parsing again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let arguments: [any PredicateArgument] = ["x", 1, 2.5, "title", [1, 2], Date(timeIntervalSinceReferenceDate: 0)]
    guard let predicate = try? QueryPredicate(format: text, argumentArray: arguments) else { return 0 }
    _ = try? QueryPredicate(format: predicate.description, argumentArray: [])
    return 0
}

/// libFuzzer's driver, which parses the command line and runs `callback` on every input.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

/// The executable's entry point under the name SwiftPM links as `main`: it hands over to
/// libFuzzer's driver.
@_cdecl("PredicateFuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzz(data, size) }
}
