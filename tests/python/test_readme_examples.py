"""Every Python example of the README runs as written (from the repository's
root, with the built module on PYTHONPATH). The C++ example is compiled and run
by tests/consumer/check_install.sh against the installed package."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    passed = failed = 0
    for i, code in enumerate(blocks):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
        if r.returncode == 0:
            passed += 1
            print(f"ok   README python example {i + 1}")
        else:
            failed += 1
            print(f"FAIL README python example {i + 1}:\n{code}\n{r.stderr[-2000:]}")
    if not blocks:
        failed += 1
        print("FAIL no python example found in README.md")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
