"""One exit class (issue 53 item 3): the package spells 0 pass, 1 a wrong gradient, 2 the
user's fault, 3 infrastructure as collgrad_torch.ExitClass, never as a bare 2 or 3 where an
exit status or an error class is meant; the C tool's enum has the same values."""

import os
import re
import unittest

from collgrad_torch import ExitClass

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "collgrad_torch")
ROOT = os.path.dirname(os.path.dirname(HERE))
# where an exit status or an error class is written with a literal 2 or 3
BARE = re.compile(r"(\breturn [23]\b(?!\s*[-+*/.,\]])|\bsys\.exit\([23]\)|\berror_class\s*=\s*[23]\b"
                  r"|[\"']class[\"']\s*:\s*[23]\b|\.get\([\"']class[\"'],\s*[23]\)"
                  r"|Error\([^()]*,\s*[23]\)|\bcls\s*=\s*[23]\b|\b[23] if \S+ else [23]\b)")

C_BARE = re.compile(r"(\breturn [23];|\b_?exit\([23]\)|\b(error_class|code|cls|rc)\s*(=|==|!=)\s*[23]\b"
                    r"|\bput_i64\(b, [23]\)|msg, [23]\))")


class ExitClasses(unittest.TestCase):
    def test_values(self) -> None:
        self.assertEqual([int(c) for c in ExitClass], [0, 1, 2, 3])
        self.assertEqual([c.name for c in ExitClass], ["PASS", "FAIL", "USAGE", "INFRA"])

    def test_no_bare_exit_literal_in_the_package(self) -> None:
        found = []
        for folder, _, files in os.walk(PACKAGE):
            for name in files:
                if not name.endswith(".py") or name == "exit_class.py":
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        code = line.split("#", 1)[0]
                        if BARE.search(code):
                            found.append(f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()}")
        self.assertEqual(found, [], "bare exit classes (use collgrad_torch.ExitClass):\n" + "\n".join(found))

    def test_no_bare_exit_literal_in_the_c_tool(self) -> None:
        # the C tool's layers write cg_exit (harness/lang/exit_class.h); these lines return a
        # count or a size, not a class
        counts = {("harness/lang/dtype.c", "case CG_F16: return 2;"), ("harness/lang/ir_print.c", "case CG_OP_OR: return 2;"),
                  ("harness/lang/ir_print.c", "case CG_OP_AND: return 3;"),
                  ("harness/explore/explore_shrink.c", "return 2;")}  # group_names: two names
        found = []
        for top in ("harness", "reports", "oracles"):
            for folder, _, files in os.walk(os.path.join(ROOT, top)):
                for name in files:
                    if not name.endswith((".c", ".h", ".cu")):
                        continue
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, ROOT)
                    with open(path, encoding="utf-8") as f:
                        for n, line in enumerate(f, 1):
                            code = line.split("//", 1)[0]
                            if C_BARE.search(code) and (rel, line.strip()) not in counts:
                                found.append(f"{rel}:{n}: {line.strip()}")
        self.assertEqual(found, [], "bare exit classes (use cg_exit, harness/lang/exit_class.h):\n" + "\n".join(found))

    def test_the_c_enum_has_the_same_values(self) -> None:
        with open(os.path.join(ROOT, "harness", "lang", "exit_class.h"), encoding="utf-8") as f:
            text = f.read()
        values = dict(re.findall(r"CG_EXIT_([A-Z]+) = (\d)", text))
        self.assertEqual(values, {"OK": "0", "FAIL": "1", "USAGE": "2", "INFRA": "3"})
        self.assertEqual({c.name: str(int(c)) for c in ExitClass},
                         {"PASS": "0", "FAIL": "1", "USAGE": "2", "INFRA": "3"})

    def test_the_pattern_finds_what_it_is_for(self) -> None:
        for text in ("        return 2", "return 3", "sys.exit(2)", "r.error_class = 2", '{"class": 3, "rank": 0}',
                     'e.get("class", 3)', "raise WorldError(message, 3)", "cls = 3 if x else 2"):
            self.assertTrue(BARE.search(text), text)
        for text in ("return 2 * x", "return 3.0", "return [2, 3]", "x = 2", "return 23"):
            self.assertFalse(BARE.search(text), text)
        for text in ("return 3;", "res->error_class = 2;", "if (o->st.code == 3)", "exit(2);", "rc = 3;"):
            self.assertTrue(C_BARE.search(text), text)
        for text in ("return 23;", "x = 2;", "int rc = cg_run(3);", "code = CG_EXIT_INFRA;"):
            self.assertFalse(C_BARE.search(text), text)


if __name__ == "__main__":
    unittest.main()
