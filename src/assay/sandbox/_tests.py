"""The unittest and pytest styles in a python check, as their users expect them (judge side).

The runner loads this file (without the import system) only when the check's code mentions
``unittest`` or defines ``test_`` functions:

- ``unittest.main()`` runs the TestCase classes the check defines (the check is the real
  ``__main__``) and ends the program, as it does anywhere; ``unittest.main(exit=False)`` returns
  and the check goes on. Either way a failing test refutes, and a run in which no test ran (none
  collected, or every one skipped) refutes.
- TestCase classes the check defines but never runs are run after the check's last line.
- Top-level ``def test_*():`` functions the check defines are called after its last line, in
  the order defined, with no arguments (pytest fixtures are not supported: a test function that
  takes arguments refutes, saying so); any exception refutes.

Only after all of that does the runner report completion.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Exit(BaseException):
    """unittest.main() with its default ``exit=True`` ended the check's program."""


class Tests:
    """The tests one check defines and the unittest runs it started."""

    def __init__(
        self,
        check: "Any",
        code: str,
        refute: "Callable[[str], None]",
        print_traceback: "Callable[[], None]",
    ) -> None:
        self._check = check
        self._refute = refute
        self._print_traceback = print_traceback
        self._results: list[Any] = []
        if "unittest" in code:
            self._wrap_unittest()

    def _wrap_unittest(self) -> None:
        import unittest  # the standard library's: the workspace is never on the judge's path

        program, results = unittest.main, self._results

        def main(*args: "Any", exit: bool = True, **kwargs: "Any") -> "Any":
            kwargs["exit"] = False
            ran = program(*args, **kwargs)
            results.append(ran.result)
            if exit:
                raise Exit
            return ran

        unittest.main = main  # type: ignore[assignment]

    def run_and_judge(self) -> None:
        """Run what is left to run; refute (never returns) on a failure or on no test at all."""
        failed = self._run_functions()
        self._run_unrun_cases()
        for result in self._results:
            if result.testsRun - len(result.skipped) <= 0:
                self._refute(
                    f"unittest ran no tests ({result.testsRun} collected, all of them skipped)"
                    if result.testsRun
                    else "unittest ran no tests: the check defines no TestCase it collects"
                )
            if not result.wasSuccessful():
                failed += len(result.failures) + len(result.errors)
                failed += len(result.unexpectedSuccesses)
        if failed:
            self._refute(f"{failed} test(s) failed")

    def _run_functions(self) -> int:
        failed = 0
        for name, value in list(vars(self._check).items()):
            if not (name.startswith("test_") and type(value).__name__ == "function"):
                continue
            if value.__module__ != "__main__":
                continue  # imported, not defined by the check
            code = value.__code__
            if code.co_argcount or code.co_kwonlyargcount:
                self._refute(f"{name} takes arguments: pytest fixtures are not supported")
            try:
                value()
            except BaseException:
                self._print_traceback()
                print(f"{name} FAILED", file=sys.stderr)
                failed += 1
        return failed

    def _run_unrun_cases(self) -> None:
        unittest = sys.modules.get("unittest")
        if self._results or unittest is None:
            return
        cases = [
            v
            for v in vars(self._check).values()
            if isinstance(v, type)
            and issubclass(v, unittest.TestCase)
            and v.__module__ == "__main__"
        ]
        if cases:
            loader = unittest.TestLoader()
            suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in cases)
            self._results.append(unittest.TextTestRunner().run(suite))
