"""Size limits of the hand-written code: no source file over 1,000 lines, no function over 150
(C and C++ by their braces, Python by its syntax tree). Generated files (spec/gen) are not counted."""
import ast
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
CODE = (".c", ".h", ".cpp", ".sv", ".v", ".py", ".sh", ".tcl", ".S")
MAX_FILE, MAX_FUNC = 1000, 150


def sources():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    files = [ROOT / f for f in out.split() if f.endswith(CODE) and not f.startswith("spec/gen/")]
    assert files, "no sources found"
    return files


KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "do", "else"}


def c_functions(text):
    """(name, first line, lines) of each function definition in C or C++ text (C++ methods in a
    class body too): a name and parameter list followed by a brace, measured to the matching brace."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    out = []
    for m in re.finditer(r"^[ \t]*[\w][\w \t\*&:<>,~]*?\b(\w+)\s*\([^;{]*?\)[\w\s:&]*?\{", text, flags=re.M):
        if m.group(1) in KEYWORDS:
            continue
        depth = 0
        for j in range(m.end() - 1, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
        first = text.count("\n", 0, m.start()) + 1
        out.append((m.group(1), first, text.count("\n", 0, j) + 2 - first))
    return out


def py_functions(text):
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_c_function_parser():
    src = ("static int f(int a)\n{\n\tif (a) {\n\t\treturn 1;\n\t}\n\treturn 0; /* } */\n}\n\nvoid C::g()\n{\n}\n"
           "class K {\n\tvoid h(int x)\n\t{\n\t\twhile (x) {\n\t\t}\n\t}\n};\n")
    assert c_functions(src) == [("f", 1, 7), ("g", 9, 3), ("h", 13, 5)]


def test_no_file_over_1000_lines():
    big = [f"{f.relative_to(ROOT)}: {n} lines" for f in sources()
           if (n := len(f.read_text(errors="replace").splitlines())) > MAX_FILE]
    assert not big, "files over 1,000 lines:\n" + "\n".join(big)


def test_no_function_over_150_lines():
    long = []
    for f in sources():
        if f.suffix not in (".c", ".h", ".cpp", ".py"):
            continue
        text = f.read_text()
        funcs = py_functions(text) if f.suffix == ".py" else c_functions(text)
        long += [f"{f.relative_to(ROOT)}:{line}: {name}, {n} lines" for name, line, n in funcs if n > MAX_FUNC]
    assert not long, "functions over 150 lines:\n" + "\n".join(long)
