#!/usr/bin/env python3
"""Checks that the layers of Sources/Strata depend only downward (DESIGN.md, "Layers").

Each folder of the Strata target is a layer. A Swift file of one layer may name the types
declared at the top level of its own layer and of the layers listed for it below; naming a type
of any other layer (a higher one, or a sibling such as SQLite from Objects) is an error. Comments
and string literals are ignored. Only SQLite/ may import GRDB or SQLite's C API.

Members a layer adds in an extension of another layer's type (a method SQLite/ adds to
Store/'s StoreDescription, say) belong to that layer too: a file of a layer that may not use it
that calls one (`.member`) is an error, unless the member is one of the layer's entry points
(ENTRY_POINTS) or a layer the file may use declares a member of that name as well.

Exits 1 and lists every offending file and type or member, 0 when clean.

    scripts/check-layers.py [SOURCES_DIR]     # default: Sources/Strata next to this script
"""
import os
import re
import sys

# Each layer and the layers it may use (DESIGN.md's table, bottom to top). SQLite and Objects
# are siblings above Store: a store never names objects, and objects reach a store only through
# the neutral protocol in Store/.
ALLOWED = {
    "Support": [],
    "Schema": ["Support"],
    "Query": ["Schema", "Support"],
    "Store": ["Query", "Schema", "Support"],
    # What SQL stores share: the relational layout (tables, columns, join tables, indexes).
    "SQL": ["Store", "Query", "Schema", "Support"],
    "SQLite": ["SQL", "Store", "Query", "Schema", "Support"],
    "Objects": ["Store", "Query", "Schema", "Support"],
    "Observation": ["Objects", "Store", "Query", "Schema", "Support"],
    "Macros": ["Observation", "Objects", "Store", "Query", "Schema", "Support"],
    # Helpers: the history tracker (later the repository and the stacks) sit on objects.
    "History": ["Observation", "Objects", "Store", "Query", "Schema", "Support"],
    "Repository": ["Observation", "Objects", "Store", "Query", "Schema", "Support"],
    "Migration": ["Objects", "Store", "Query", "Schema", "Support"],
    # Data stacks and store locations put containers, history trackers and migrations together.
    "Stack": ["Migration", "History", "Observation", "Objects", "Store", "Query", "Schema", "Support"],
}

# Other targets that sit at a layer of Strata: the PostgreSQL store is a store like SQLite/,
# and may name nothing of Objects/ and above.
OTHER_TARGETS = {"StrataPostgres": ["SQL", "Store", "Query", "Schema", "Support"]}

# What a higher layer may call of a store's folder: the description factories that name the
# store (the embedded default, SQLite, is named by `.sqlite(url)` and `.inMemory` wherever a
# container, stack or migration takes a URL). Everything else goes through the provider's
# requirements, declared in Store/.
ENTRY_POINTS = {"SQLite": {"sqlite", "inMemory"}}

# Modules only one layer may import: the SQLite layer owns every use of GRDB and SQLite's C API.
IMPORTS_OWNED_BY = {"GRDB": "SQLite", "GRDBSQLite": "SQLite", "SQLite3": "SQLite"}

IMPORT = re.compile(r"^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?(\w+)", re.M)

DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|internal|private|fileprivate|package|final|indirect|nonisolated|open)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_]\w*)",
    re.M,
)


def code_only(source):
    """The source without comments and string literals."""
    source = re.sub(r"/\*.*?\*/", "", source, flags=re.S)
    source = re.sub(r"//[^\n]*", "", source)
    source = re.sub(r'"""(?:.|\n)*?"""', '""', source)
    source = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', source)
    return source


EXTENSION = re.compile(
    r"^(?:(?:public|internal|private|fileprivate|package)\s+)?extension\s+([A-Za-z_][\w.]*)[^{\n]*\{", re.M)
MEMBER = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|internal|private|fileprivate|package|static|class|final|override|mutating|nonisolated|"
    r"@discardableResult)\s+)*(?:func|var|let|case)\s+([A-Za-z_]\w*)", re.M)


def block_body(code, start):
    """The text from `start` (just after an opening brace) to its closing brace."""
    depth = 1
    position = start
    while position < len(code) and depth:
        if code[position] == "{":
            depth += 1
        elif code[position] == "}":
            depth -= 1
        position += 1
    return code[start:position - 1]


def top_level(body):
    """The lines of `body` outside nested braces (the members of an extension, not their code)."""
    depth = 0
    kept = []
    for character in body:
        if character == "{":
            depth += 1
        elif character == "}":
            depth -= 1
        elif depth == 0:
            kept.append(character)
    return "".join(kept)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "Sources", "Strata")
    problems = []
    folders = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for folder in folders:
        has_swift = any(f.endswith(".swift") for _, _, fs in os.walk(os.path.join(root, folder)) for f in fs)
        if has_swift and folder not in ALLOWED:
            problems.append(f"{folder}/: not a known layer; add it to ALLOWED in {os.path.basename(__file__)}")
    owner = {}
    files = {}
    for layer in ALLOWED:
        directory = os.path.join(root, layer)
        if not os.path.isdir(directory):
            continue
        for base, _, names in os.walk(directory):
            for name in sorted(names):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as handle:
                    code = code_only(handle.read())
                files[(layer, os.path.relpath(path, root))] = code
                for match in DECLARATION.finditer(code):
                    owner.setdefault(match.group(1), layer)
    for (layer, path), code in sorted(files.items()):
        for module in sorted(set(IMPORT.findall(code))):
            if module in IMPORTS_OWNED_BY and IMPORTS_OWNED_BY[module] != layer:
                problems.append(f"{path}: imports {module}, which only {IMPORTS_OWNED_BY[module]}/ may import")
        for name in sorted(set(re.findall(r"\b[A-Z]\w*\b", code))):
            other = owner.get(name)
            if other and other != layer and other not in ALLOWED[layer]:
                problems.append(f"{path}: names {name}, declared in {other}/ ({layer}/ may use: "
                                f"{', '.join(ALLOWED[layer]) or 'nothing'})")
    # Members each layer adds to types it does not declare, and every member name each layer
    # declares anywhere (to tell a call of another layer's member from one of the caller's own).
    added = {}
    declared = {}
    for (layer, path), code in files.items():
        declared.setdefault(layer, set()).update(MEMBER.findall(code))
        for match in EXTENSION.finditer(code):
            # Only types of another layer: an extension of a standard type (`Sequence.joined`)
            # overloads names every layer uses, which a name-based check cannot tell apart.
            extended = match.group(1).split(".")[0]
            if owner.get(extended) in (None, layer):
                continue
            for member in MEMBER.findall(top_level(block_body(code, match.end()))):
                added.setdefault(layer, {}).setdefault(member, (extended, path))
    for (layer, path), code in sorted(files.items()):
        usable = set(ALLOWED[layer]) | {layer}
        known = set().union(*(declared.get(other, set()) for other in usable))
        for name in sorted(set(re.findall(r"\.([A-Za-z_]\w*)\b", code))):
            for other, members in sorted(added.items()):
                if other in usable or name not in members or name in known or name in ENTRY_POINTS.get(other, ()):
                    continue
                extended, where = members[name]
                problems.append(f"{path}: calls {name}, which {other}/ adds to {extended} ({where}; {layer}/ may use: "
                                f"{', '.join(ALLOWED[layer]) or 'nothing'})")
    sources = os.path.dirname(os.path.abspath(root))
    for target, allowed in OTHER_TARGETS.items():
        directory = os.path.join(sources, target)
        for base, _, names in os.walk(directory):
            for name in sorted(names):
                if not name.endswith(".swift"):
                    continue
                path = os.path.join(base, name)
                with open(path, encoding="utf-8") as handle:
                    code = code_only(handle.read())
                files[(target, os.path.relpath(path, sources))] = code
                for type_name in sorted(set(re.findall(r"\b[A-Z]\w*\b", code))):
                    other = owner.get(type_name)
                    if other and other not in allowed:
                        problems.append(f"{target}/{os.path.relpath(path, directory)}: names {type_name}, declared in "
                                        f"Strata's {other}/ ({target} may use: {', '.join(allowed)})")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} dependencies go against the layers", file=sys.stderr)
        return 1
    print(f"check-layers: {len(files)} files, every dependency goes downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
