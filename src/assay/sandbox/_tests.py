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
- pytest test classes (top-level ``class Test*:`` that are not TestCases and have no
  ``__init__``): each ``test_*`` method runs on a fresh instance, between ``setup_method`` and
  ``teardown_method`` when the class has them.
- ``async def`` and generator tests refute ("unsupported test style"): their body would never
  run. A check that defines any test and runs none refutes.

The check's own tests are those whose code was compiled from the check (their code object's
file name is the check's), never judged by ``__module__``, which candidate code can rebind.

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
        filename: str,
        refute: "Callable[[str], None]",
        print_traceback: "Callable[[], None]",
    ) -> None:
        self._check = check
        self._filename = filename
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
        if self._check.__dict__.get("__name__") != "__main__":
            self._refute("the check's __name__ was replaced: refused")
        ran, failed = self._run_functions()
        ran_classes, failed_classes = self._run_classes()
        ran, failed = ran + ran_classes, failed + failed_classes
        self._run_unrun_cases()
        for result in self._results:
            if result.testsRun - len(result.skipped) <= 0:
                self._refute(
                    f"unittest ran no tests ({result.testsRun} collected, all of them skipped)"
                    if result.testsRun
                    else "unittest ran no tests: the check defines no TestCase it collects"
                )
            ran += result.testsRun
            if not result.wasSuccessful():
                failed += len(result.failures) + len(result.errors)
                failed += len(result.unexpectedSuccesses)
        if failed:
            self._refute(f"{failed} test(s) failed")
        if not ran and self._defines_tests():
            self._refute("the check defines tests and none of them ran")

    def _own(self, value: object) -> bool:
        """Compiled from the check (a function, or a class with a method that is)."""
        code = getattr(value, "__code__", None)
        if code is not None:
            return bool(code.co_filename == self._filename)
        if isinstance(value, type):
            return any(self._own(v) for v in vars(value).values())
        return False

    def _defines_tests(self) -> bool:
        unittest = sys.modules.get("unittest")
        for name, value in vars(self._check).items():
            if not self._own(value):
                continue
            if name.startswith("test_") or _collected(name, value):
                return True
            if (
                unittest is not None
                and isinstance(value, type)
                and issubclass(value, unittest.TestCase)
            ):
                return True
        return False

    def _supported(self, name: str, function: "Any", arguments: int) -> None:
        code = function.__code__
        if code.co_flags & 0x3A0:  # generator, coroutine, iterable coroutine, async generator
            self._refute(
                f"{name} is an async or generator test: unsupported test style (its body "
                "would never run)"
            )
        if code.co_argcount != arguments or code.co_kwonlyargcount:
            self._refute(f"{name} takes arguments: pytest fixtures are not supported")

    def _call(self, name: str, test: "Callable[[], object]") -> int:
        try:
            test()
        except BaseException:
            self._print_traceback()
            print(f"{name} FAILED", file=sys.stderr)
            return 1
        return 0

    def _run_functions(self) -> tuple[int, int]:
        ran = failed = 0
        for name, value in list(vars(self._check).items()):
            if not (name.startswith("test_") and type(value).__name__ == "function"):
                continue
            if not self._own(value):
                continue  # imported, not defined by the check
            self._supported(name, value, 0)
            ran += 1
            failed += self._call(name, value)
        return ran, failed

    def _run_classes(self) -> tuple[int, int]:
        """pytest test classes: ``class Test*:`` without ``__init__``, not a TestCase."""
        unittest = sys.modules.get("unittest")
        ran = failed = 0
        for name, cls in list(vars(self._check).items()):
            if not (name.startswith("Test") and isinstance(cls, type) and self._own(cls)):
                continue
            if unittest is not None and issubclass(cls, unittest.TestCase):
                continue
            if "__init__" in vars(cls):
                continue  # pytest does not collect it either
            for method in [m for m in dir(cls) if m.startswith("test_")]:
                function = getattr(cls, method)
                if not callable(function) or not hasattr(function, "__code__"):
                    continue
                self._supported(f"{name}.{method}", function, 1)
                ran += 1
                failed += self._call(f"{name}.{method}", _bound(cls, method))
        return ran, failed

    def _run_unrun_cases(self) -> None:
        unittest = sys.modules.get("unittest")
        if self._results or unittest is None:
            return
        cases = [
            v
            for v in vars(self._check).values()
            if isinstance(v, type) and issubclass(v, unittest.TestCase) and self._own(v)
        ]
        if cases:
            loader = unittest.TestLoader()
            suite = unittest.TestSuite(loader.loadTestsFromTestCase(c) for c in cases)
            self._results.append(unittest.TextTestRunner().run(suite))


def _collected(name: str, value: object) -> bool:
    """A pytest test class: ``Test*``, no ``__init__``, with ``test_*`` methods."""
    return (
        isinstance(value, type)
        and name.startswith("Test")
        and "__init__" not in vars(value)
        and any(m.startswith("test_") for m in dir(value))
    )


def _bound(cls: type, method: str) -> "Callable[[], None]":
    return lambda: _one(cls, method)


def _one(cls: type, method: str) -> None:
    """One pytest-style test method, on a fresh instance, with its setup and teardown."""
    instance = cls()
    setup = getattr(instance, "setup_method", None)
    if setup is not None:
        setup(getattr(instance, method))
    try:
        getattr(instance, method)()
    finally:
        teardown = getattr(instance, "teardown_method", None)
        if teardown is not None:
            teardown(getattr(instance, method))
