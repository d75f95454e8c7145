"""Grad modes: context managers, decorators, nesting, threads, inference mode's rules."""

from __future__ import annotations

import threading

import gradstack_autograd as ag
import gradstack_tensor as gt
import pytest


@pytest.fixture(autouse=True)
def _restore_modes():
    yield
    assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled(), "a test leaked a mode"


def _records(x):
    return (x * 2).requires_grad


# ---------------------------------------------------------------------------------------
# context managers


def test_no_grad_and_enable_grad_blocks():
    x = gt.ones(2, requires_grad=True)
    with ag.no_grad():
        assert not ag.is_grad_enabled() and not _records(x)
        with ag.enable_grad():
            assert ag.is_grad_enabled() and _records(x)
        assert not ag.is_grad_enabled()
    assert ag.is_grad_enabled() and _records(x)


def test_set_grad_enabled_as_context_manager_and_function():
    x = gt.ones(2, requires_grad=True)
    with ag.set_grad_enabled(False):
        assert not _records(x)
        with ag.set_grad_enabled(True):
            assert _records(x)
        assert not _records(x)
    assert _records(x)
    ag.set_grad_enabled(False)  # as a function: takes effect at once
    try:
        assert not ag.is_grad_enabled() and not _records(x)
    finally:
        ag.set_grad_enabled(True)
    assert ag.is_grad_enabled()
    with pytest.raises(TypeError, match="mode must be a bool"):
        ag.set_grad_enabled(1)


def test_nesting_restores_the_outer_mode_even_after_an_error():
    with ag.no_grad():
        with pytest.raises(ValueError):
            with ag.enable_grad():
                raise ValueError
        assert not ag.is_grad_enabled()
        with ag.set_grad_enabled(True):
            with ag.no_grad():
                with ag.inference_mode():
                    assert ag.is_inference_mode_enabled() and not ag.is_grad_enabled()
                assert not ag.is_inference_mode_enabled() and not ag.is_grad_enabled()
            assert ag.is_grad_enabled()
        assert not ag.is_grad_enabled()


def test_one_object_reentered():
    ctx = ag.no_grad()
    with ctx:
        with ctx:
            assert not ag.is_grad_enabled()
        assert not ag.is_grad_enabled()
    assert ag.is_grad_enabled()


# ---------------------------------------------------------------------------------------
# decorators


def test_decorators():
    x = gt.ones(2, requires_grad=True)

    @ag.no_grad()
    def f(t):
        return t * 2

    @ag.no_grad
    def f_bare(t):
        return t * 2

    @ag.enable_grad()
    def g(t):
        return t * 2

    @ag.set_grad_enabled(False)
    def h(t):
        return t * 2

    assert ag.is_grad_enabled()  # decorating does not change the mode
    assert not f(x).requires_grad and not f_bare(x).requires_grad and not h(x).requires_grad
    with ag.no_grad():
        assert g(x).requires_grad
    assert f.__name__ == "f" and f_bare.__name__ == "f_bare"


def test_decorated_generator_functions():
    @ag.no_grad()
    def gen():
        for _ in range(2):
            received = yield ag.is_grad_enabled()
            assert received == "sent"

    @ag.enable_grad()
    def gen_on():
        yield ag.is_grad_enabled()

    it = gen()
    assert next(it) is False
    assert ag.is_grad_enabled()  # the caller's mode between steps
    assert it.send("sent") is False
    with pytest.raises(StopIteration):
        it.send("sent")
    with ag.no_grad():
        assert list(gen_on()) == [True]
        assert not ag.is_grad_enabled()


def test_decorated_generator_return_value_and_close():
    closed = []

    @ag.no_grad()
    def gen():
        try:
            yield 1
            return "done"
        finally:
            closed.append(ag.is_grad_enabled())

    def drive():
        return (yield from gen())

    d = drive()
    next(d)
    with pytest.raises(StopIteration) as info:
        next(d)
    assert info.value.value == "done" and closed == [False]
    it = gen()
    next(it)
    it.close()  # the inner generator is closed in the mode
    assert closed == [False, False]


def test_decorated_generator_receives_thrown_exceptions():
    @ag.no_grad()
    def gen():
        try:
            yield 1
        except KeyError:
            yield ag.is_grad_enabled()

    it = gen()
    next(it)
    assert it.throw(KeyError()) is False


# ---------------------------------------------------------------------------------------
# threads


def test_grad_mode_is_thread_local():
    x = gt.ones(2, requires_grad=True)
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def holder():
        with ag.no_grad():
            entered.set()
            release.wait(5)
            seen["holder"] = ag.is_grad_enabled(), _records(x)

    def other():
        entered.wait(5)
        seen["other"] = ag.is_grad_enabled(), _records(x)
        with ag.inference_mode():
            seen["other inference"] = ag.is_inference_mode_enabled()
        release.set()

    threads = [threading.Thread(target=holder), threading.Thread(target=other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"holder": (False, False), "other": (True, True), "other inference": True}
    assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled()


def test_new_threads_start_with_grad_mode_on():
    result = []
    with ag.no_grad():
        t = threading.Thread(target=lambda: result.append(ag.is_grad_enabled()))
        t.start()
        t.join()
    assert result == [True]


# ---------------------------------------------------------------------------------------
# inference mode


def test_inference_mode_basics():
    x = gt.ones(2, requires_grad=True)
    assert not ag.is_inference_mode_enabled()
    with ag.inference_mode():
        assert ag.is_inference_mode_enabled() and not ag.is_grad_enabled()
        y = x * 2
        assert not y.requires_grad and y.is_inference()
        with ag.inference_mode(False):  # back to normal mode inside
            assert not ag.is_inference_mode_enabled() and ag.is_grad_enabled()
            assert _records(x)
    assert not x.is_inference() and not (x * 2).is_inference()

    @ag.inference_mode()
    def f():
        return ag.is_inference_mode_enabled()

    @ag.inference_mode
    def f_bare():
        return ag.is_inference_mode_enabled()

    assert f() and f_bare() and not ag.is_inference_mode_enabled()


def test_inference_tensors_cannot_be_saved_for_backward():
    x = gt.ones(2, requires_grad=True)
    with ag.inference_mode():
        i = gt.ones(2) * 3
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved") as info:
        x * i  # MulBackward0 would save i
    assert "clone" in str(info.value) and "MulBackward0" in str(info.value)
    (x + i).sum().backward()  # add saves nothing: allowed, as in torch
    assert x.grad.tolist() == [1.0, 1.0]
    (x * i.clone()).sum().backward()  # the suggested workaround
    assert x.grad.tolist() == [4.0, 4.0]


def test_inference_tensors_cannot_be_updated_in_place_outside():
    with ag.inference_mode():
        i = gt.ones(2) * 3
        i.add_(1)  # fine inside
    assert i.tolist() == [4.0, 4.0]
    with pytest.raises(
        RuntimeError,
        match="Inplace update to inference tensor outside InferenceMode is not allowed",
    ):
        i.add_(1)
    with pytest.raises(
        RuntimeError,
        match="Setting requires_grad=True on inference tensor outside InferenceMode is not allowed",
    ):
        i.requires_grad_()
    c = i.clone()
    assert not c.is_inference()
    c.add_(1)
    assert c.tolist() == [5.0, 5.0]


def test_no_grad_tensors_are_normal_tensors():
    x = gt.ones(2, requires_grad=True)
    with ag.no_grad():
        n = x * 3
    assert not n.is_inference()
    n.add_(1)
    (x * n).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]
