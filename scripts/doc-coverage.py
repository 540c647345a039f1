#!/usr/bin/env python3
"""Reports how much of the public API carries a doc comment, and how many functions show an example.

For each folder given (default: Sources/Strata and Sources/StrataPostgres next to this script),
scans every .swift file below it and prints two figures:

  documented    public and open declarations with a `///` or `/** */` doc comment directly
                above them, out of all public and open declarations;
  examples      public and open functions and initializers whose doc comment has a line
                ending in "For example:" followed, further down the same comment, by a ```
                code block, out of all public and open functions and initializers.

    scripts/doc-coverage.py                               # both default folders
    scripts/doc-coverage.py --by-folder Sources/Strata    # a line per sub-folder as well
    scripts/doc-coverage.py --list Sources/Strata/Query   # file:line of each one missing
    scripts/doc-coverage.py --require-documented 100 --require-examples 100 Sources/Strata/Query

Exits 0, unless --require-documented PERCENT or --require-examples PERCENT is given and a
folder named on the command line (taken as a whole, sub-folders included) falls below it; then
exits 1. A folder with nothing to count meets any requirement.

What counts as a declaration: func, init, subscript, var, let, struct, class, enum, protocol,
actor, typealias, associatedtype and macro, declared `public` or `open` (or without a modifier
inside a `public extension`), at file level or inside a type or extension, not inside a body;
a member of a public protocol, and each `case` line of a public enum, counts as public too. A
declaration inside a type that is not public does not count. An extension of a type declared
elsewhere is taken to extend a public type. A `case` line declaring several cases counts once.
Subscripts count for "documented" only; "examples" counts func and init.

Between the doc comment and the declaration there may be attribute lines (`@MainActor`,
`@available(...)`, also over several lines) and `#if`/`#elseif`/`#else`/`#endif` lines; a
blank line or an ordinary `//` comment in between counts as detaching it.

Operator functions (`static func ==`, `<`, `~=`, prefix `!`, the key-path operators) count for
"documented" but need no example. Left out of both figures, as plain protocol witnesses:
`hash(into:)` and `hashValue`; and, in a type or extension whose header names the protocol,
`description` and `debugDescription` (CustomStringConvertible, CustomDebugStringConvertible,
LosslessStringConvertible), `init(from:)` and `encode(to:)` (Codable, Decodable, Encodable),
`init(stringLiteral:)` and the other literal initializers (ExpressibleBy...Literal),
`init(rawValue:)` (RawRepresentable, OptionSet, CodingKey), `makeIterator()`,
`makeAsyncIterator()` and `next()` (Sequence, AsyncSequence and their iterators). Also left
out: names starting with an underscore (`_keyPathNames`), which DocC hides.

Comments and string literals (multi-line, raw, with interpolations) are stripped before
declarations are looked for; regular-expression literals are not understood.
"""
import argparse
import os
import re
import signal
import sys

DEFAULT_FOLDERS = ["Sources/Strata", "Sources/StrataPostgres"]

ACCESS = r"(?:public|open|package|internal|fileprivate|private)(?:\(set\))?"
OTHER_MODIFIERS = (
    r"(?:static|class|final|override|mutating|nonmutating|convenience|required|lazy|weak"
    r"|unowned(?:\((?:safe|unsafe)\))?|dynamic|nonisolated(?:\(unsafe\))?|indirect|optional"
    r"|prefix|postfix|infix|distributed|consuming|borrowing|__consuming)"
)
ATTRIBUTE = r"@[A-Za-z_][\w.]*(?:<[^>]*>)?(?:\((?:[^()]|\([^()]*\))*\))?"
KEYWORDS = (
    "func|init|subscript|var|let|case|struct|class|enum|protocol|actor|typealias"
    "|associatedtype|extension|deinit|macro|operator|precedencegroup"
)
DECLARATION = re.compile(
    r"^(?P<attributes>(?:" + ATTRIBUTE + r"\s*)*)"
    r"(?P<modifiers>(?:(?:" + ACCESS + "|" + OTHER_MODIFIERS + r")\s+)*)"
    r"(?P<keyword>" + KEYWORDS + r")(?![\w])"
)
ATTRIBUTE_START = re.compile(r"^@[A-Za-z_]")
DIRECTIVE = re.compile(r"^#(?:if|elseif|else|endif)\b")
TYPE_KEYWORDS = {"struct", "class", "enum", "protocol", "actor", "extension"}
COUNTED = {
    "func", "init", "subscript", "var", "let", "case", "struct", "class", "enum", "protocol",
    "actor", "typealias", "associatedtype", "macro",
}
WITH_EXAMPLE = {"func", "init"}
OPERATOR_CHARACTERS = set("/=-+!*%<>&|^~?.")
DESCRIPTION_PROTOCOLS = re.compile(
    r"\b(?:CustomStringConvertible|CustomDebugStringConvertible|LosslessStringConvertible)\b")
CODING_PROTOCOLS = re.compile(r"\b(?:Codable|Decodable|Encodable)\b")
LITERAL_PROTOCOLS = re.compile(r"\bExpressibleBy\w+\b")
RAW_VALUE_PROTOCOLS = re.compile(r"\b(?:RawRepresentable|OptionSet|CodingKey)\b")
SEQUENCE_PROTOCOLS = re.compile(r"\b(?:Sequence|IteratorProtocol|AsyncSequence|AsyncIteratorProtocol)\b")
LITERAL_INITIALIZER = re.compile(
    r"[?!]?\s*\(\s*(?:stringLiteral|integerLiteral|floatLiteral|booleanLiteral|nilLiteral|arrayLiteral"
    r"|dictionaryLiteral|unicodeScalarLiteral|extendedGraphemeClusterLiteral|stringInterpolation)\b")
FOR_EXAMPLE = re.compile(r"for example:\s*$", re.IGNORECASE)


class Line:
    __slots__ = ("code", "doc", "in_block")

    def __init__(self):
        self.code = []          # characters of code; string contents and comments removed
        self.doc = None         # text of a `///` line or of a line inside `/** */`
        self.in_block = False   # the doc text comes from a `/** */` comment


def lex(text):
    """Splits Swift source into lines of code with comments and string contents removed."""
    lines = [Line()]
    stack = [["code", None]]  # code (paren depth inside an interpolation), string, block comment
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        mode = stack[-1]
        if c == "\n":
            if mode[0] == "string" and not mode[2]:
                stack.pop()  # an unterminated single-line string ends with its line
            lines.append(Line())
            if stack[-1][0] == "block" and stack[-1][2]:
                lines[-1].doc, lines[-1].in_block = "", True
            i += 1
            continue
        if mode[0] == "code":
            if text.startswith("//", i):
                end = text.find("\n", i)
                end = n if end < 0 else end
                comment = text[i:end]
                if comment.startswith("///") and not comment.startswith("////") and not "".join(lines[-1].code).strip():
                    lines[-1].doc = comment[3:]
                i = end
                continue
            if text.startswith("/*", i):
                is_doc = text.startswith("/**", i) and not text.startswith("/**/", i)
                stack.append(["block", 1, is_doc])
                if is_doc and not "".join(lines[-1].code).strip():
                    lines[-1].doc, lines[-1].in_block = "", True
                i += 3 if is_doc else 2
                continue
            if c in "#\"":
                match = re.match(r'(#*)("""|")', text[i:i + 12])
                if match:
                    stack.append(["string", len(match.group(1)), match.group(2) == '"""'])
                    lines[-1].code.append('"')
                    i += match.end()
                    continue
            if mode[1] is not None:
                if c == "(":
                    mode[1] += 1
                elif c == ")":
                    mode[1] -= 1
                    if mode[1] == 0:
                        stack.pop()
                        i += 1
                        continue
            lines[-1].code.append(c)
            i += 1
        elif mode[0] == "string":
            hashes, multiline = mode[1], mode[2]
            close = ('"""' if multiline else '"') + "#" * hashes
            if text.startswith(close, i):
                stack.pop()
                lines[-1].code.append('"')
                i += len(close)
                continue
            if c == "\\":
                if text.startswith("#" * hashes + "(", i + 1):
                    stack.append(["code", 1])
                    i += 2 + hashes
                    continue
                if hashes == 0 and i + 1 < n and text[i + 1] != "\n":
                    i += 2
                    continue
            i += 1
        else:  # block comment
            if text.startswith("/*", i):
                mode[1] += 1
                i += 2
                continue
            if text.startswith("*/", i):
                mode[1] -= 1
                i += 2
                if mode[1] == 0:
                    stack.pop()
                continue
            if mode[2] and lines[-1].doc is not None:
                lines[-1].doc += c
            i += 1
    for line in lines:
        line.code = "".join(line.code)
        if line.in_block and line.code.strip():
            line.doc = None  # code after a closing `*/`
        elif line.in_block and line.doc.lstrip().startswith("*"):
            line.doc = line.doc.lstrip()[1:]  # the leading star of a `/** */` continuation line
    return lines


class Scope:
    __slots__ = ("kind", "public", "members_public", "header")

    def __init__(self, kind, public=False, members_public=False, header=""):
        self.kind = kind                      # file, type keyword, or body
        self.public = public                  # the type is visible outside the module
        self.members_public = members_public  # members are public without a modifier
        self.header = header                  # the declaration's text, for conformances


class Declaration:
    __slots__ = ("path", "line", "keyword", "text", "doc", "public", "excluded", "operator")

    def __init__(self, path, line, keyword, text, doc):
        self.path, self.line, self.keyword, self.text, self.doc = path, line, keyword, text, doc
        self.public = False
        self.excluded = False   # left out of both figures
        self.operator = False   # counted as documented or not, but needs no example

    @property
    def documented(self):
        return self.doc is not None and any(part.strip() for part in self.doc)

    @property
    def has_example(self):
        if not self.doc:
            return False
        seen = False
        for part in self.doc:
            if seen and part.strip().startswith("```"):
                return True
            if FOR_EXAMPLE.search(part.strip()):
                seen = True
        return False


def access_of(modifiers):
    for word in re.findall(ACCESS, modifiers):
        if not word.endswith("(set)"):
            return word
    return None


def is_public(match, scope):
    """Whether a declaration matched in `scope` is visible outside the module."""
    access = access_of(match.group("modifiers"))
    keyword = match.group("keyword")
    if scope.kind == "file":
        # An extension is taken to extend a public type (unless it says otherwise); its members
        # say their own access.
        if keyword == "extension":
            return access in (None, "public", "open")
        return access in ("public", "open")
    if not scope.public:
        return False
    if scope.kind == "protocol":
        return True
    if scope.kind == "enum" and keyword == "case":
        return True
    if access is None:
        return scope.members_public or keyword == "extension"
    return access in ("public", "open")


def is_witness(match, code, scope):
    """Whether a declaration is a plain protocol witness, left out of both figures."""
    keyword = match.group("keyword")
    rest = code[match.end():].lstrip()
    header = scope.header
    if keyword == "func":
        if re.match(r"hash\s*\(\s*into\b", rest):
            return True
        if re.match(r"encode\s*\(\s*to\b", rest) and CODING_PROTOCOLS.search(header):
            return True
        if re.match(r"(?:makeIterator|makeAsyncIterator|next)\s*\(", rest) and SEQUENCE_PROTOCOLS.search(header):
            return True
    if keyword == "init":
        if re.match(r"[?!]?\s*\(\s*from\s+decoder\b", rest) and CODING_PROTOCOLS.search(header):
            return True
        if LITERAL_INITIALIZER.match(rest) and LITERAL_PROTOCOLS.search(header):
            return True
        if re.match(r"[?!]?\s*\(\s*rawValue\s*:", rest) and RAW_VALUE_PROTOCOLS.search(header):
            return True
    if keyword == "var":
        if re.match(r"hashValue\b", rest):
            return True
        if re.match(r"(?:description|debugDescription)\b", rest) and DESCRIPTION_PROTOCOLS.search(header):
            return True
    return False


def is_operator(match, code):
    """Whether the declaration is an operator function (`static func ==`, `prefix func !`)."""
    return match.group("keyword") == "func" and code[match.end():].lstrip()[:1] in OPERATOR_CHARACTERS


def is_underscored(match, code):
    """Whether the declaration's name starts with an underscore, which hides it from DocC."""
    rest = code[match.end():].lstrip()
    return rest.startswith("_") and not rest.startswith("_ ")


def declarations(path):
    with open(path, encoding="utf-8") as file:
        lines = lex(file.read())
    found = []
    scopes = [Scope("file", public=True)]
    pending = None          # the scope the next `{` opens: a type's, or a body
    doc = None              # the doc comment lines waiting for a declaration
    doc_open = False        # the previous line was part of that doc comment
    attribute_depth = 0     # unbalanced parentheses of a multi-line attribute
    for number, line in enumerate(lines, start=1):
        code = line.code.strip()
        if not code:
            if line.doc is not None:
                doc = (doc if doc_open and doc is not None else []) + [line.doc]
                doc_open = True
            else:
                doc, doc_open = None, False
            continue
        doc_open = False
        # A line may close scopes before it declares anything (`} public func …` is rare).
        while code.startswith("}"):
            if len(scopes) > 1:
                scopes.pop()
            code = code[1:].lstrip()
        scope = scopes[-1]
        at_type_level = scope.kind != "body"
        if attribute_depth > 0:
            attribute_depth += code.count("(") - code.count(")")
            attribute_depth = max(attribute_depth, 0)
            rest = ""
        elif DIRECTIVE.match(code):
            rest = ""
        else:
            match = DECLARATION.match(code) if at_type_level and code else None
            if match:
                keyword = match.group("keyword")
                public = is_public(match, scope)
                if keyword in COUNTED:
                    item = Declaration(path, number, keyword, code, doc)
                    item.public = public
                    item.excluded = is_witness(match, code, scope) or is_underscored(match, code)
                    item.operator = is_operator(match, code)
                    found.append(item)
                if keyword in TYPE_KEYWORDS:
                    members_public = keyword == "extension" and access_of(match.group("modifiers")) in ("public", "open")
                    pending = Scope(keyword, public=public, members_public=members_public, header=code)
                else:
                    pending = Scope("body")
                doc = None
            elif code and ATTRIBUTE_START.match(code):
                # An attribute on its own line; it may run over several lines.
                stripped = re.sub(ATTRIBUTE, "", code).strip()
                if stripped:
                    depth = code.count("(") - code.count(")")
                    attribute_depth = max(depth, 0)
                    if attribute_depth == 0:
                        doc = None
            elif code:
                doc = None
                if pending is not None and pending.kind in TYPE_KEYWORDS:
                    pending.header += " " + code  # an inheritance clause over several lines
            rest = code
        for character in rest:
            if character == "{":
                scopes.append(pending if pending is not None else Scope("body"))
                pending = None
            elif character == "}":
                if len(scopes) > 1:
                    scopes.pop()
    return found


class Tally:
    def __init__(self):
        self.declarations = 0
        self.documented = 0
        self.functions = 0
        self.examples = 0
        self.undocumented = []
        self.without_example = []

    def add(self, item):
        self.declarations += 1
        if item.documented:
            self.documented += 1
        else:
            self.undocumented.append(item)
        if item.keyword in WITH_EXAMPLE and not item.operator:
            self.functions += 1
            if item.has_example:
                self.examples += 1
            else:
                self.without_example.append(item)

    @staticmethod
    def percent(part, whole):
        return 100.0 if whole == 0 else 100.0 * part / whole

    @property
    def documented_percent(self):
        return self.percent(self.documented, self.declarations)

    @property
    def examples_percent(self):
        return self.percent(self.examples, self.functions)

    def row(self, name, width):
        def figure(part, whole):
            if whole == 0:
                return f"{part:>5}/{whole:<5}    —  "
            return f"{part:>5}/{whole:<5} {self.percent(part, whole):5.1f}%"
        return (f"{name:<{width}}  documented {figure(self.documented, self.declarations)}"
                f"   with example {figure(self.examples, self.functions)}")


def swift_files(root):
    if os.path.isfile(root):
        return [root] if root.endswith(".swift") else []
    result = []
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(folder for folder in folders if not folder.startswith("."))
        result.extend(os.path.join(directory, file) for file in sorted(files) if file.endswith(".swift"))
    return result


def main():
    parser = argparse.ArgumentParser(
        description="Counts documented public declarations and functions with examples.",
        epilog="See the docstring at the top of this script for what counts.")
    parser.add_argument("folders", nargs="*", help=f"folders or files to scan (default: {' '.join(DEFAULT_FOLDERS)})")
    parser.add_argument("--by-folder", action="store_true", help="also print a line for each sub-folder")
    parser.add_argument("--list", action="store_true", help="print file:line of each declaration missing a doc comment or an example")
    parser.add_argument("--require-documented", type=float, metavar="PERCENT", help="exit 1 if a folder is less documented")
    parser.add_argument("--require-examples", type=float, metavar="PERCENT", help="exit 1 if fewer of a folder's functions have examples")
    arguments = parser.parse_args()

    folders = arguments.folders
    if not folders:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        folders = [os.path.relpath(os.path.join(root, folder)) for folder in DEFAULT_FOLDERS]
    failed = False
    results = []
    for folder in folders:
        if not os.path.exists(folder):
            print(f"{folder}: no such folder or file", file=sys.stderr)
            failed = True
            continue
        total = Tally()
        by_folder = {}
        for path in swift_files(folder):
            sub = os.path.relpath(os.path.dirname(path), folder) if os.path.isdir(folder) else "."
            for item in declarations(path):
                if not item.public or item.excluded:
                    continue
                total.add(item)
                by_folder.setdefault(sub, Tally()).add(item)
        results.append((folder.rstrip("/") or folder, total, by_folder))

    names = [name for name, _, _ in results]
    if arguments.by_folder:
        names += ["  " + sub + "/" for _, _, by_folder in results for sub in by_folder]
    width = max(map(len, names), default=0)
    for name, total, by_folder in results:
        print(total.row(name, width))
        if arguments.by_folder:
            for sub in sorted(by_folder):
                print(by_folder[sub].row("  " + (sub + "/" if sub != "." else "./"), width))
        if arguments.list:
            for item in total.undocumented:
                print(f"  {item.path}:{item.line}: undocumented: {item.text[:100]}")
            for item in total.without_example:
                print(f"  {item.path}:{item.line}: no example: {item.text[:100]}")
        if arguments.require_documented is not None and total.documented_percent < arguments.require_documented:
            print(f"{name}: {total.documented_percent:.1f}% documented, below the {arguments.require_documented:g}% required",
                  file=sys.stderr)
            failed = True
        if arguments.require_examples is not None and total.examples_percent < arguments.require_examples:
            print(f"{name}: {total.examples_percent:.1f}% of functions have an example, below the "
                  f"{arguments.require_examples:g}% required", file=sys.stderr)
            failed = True
    requirements = arguments.require_documented is not None or arguments.require_examples is not None
    return 1 if failed and requirements else 0


if __name__ == "__main__":
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quietly stop when piped into `head`
    sys.exit(main())
