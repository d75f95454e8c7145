"""The examples in the docstrings of every module of gradstack_profiler run and print what they
say (Note [Examples run as a reader runs them] in the workspace's conftest.py)."""

DOCSTRING_PACKAGE = "gradstack_profiler"


def test_docstring_examples(docstring_module, run_docstring_examples):
    run_docstring_examples(docstring_module)
