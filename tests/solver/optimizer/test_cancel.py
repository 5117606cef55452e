"""solver.optimizer.cancel: an interrupt that lands before the solver starts is repeated, not lost."""

from __future__ import annotations

import time

from solver.optimizer.cancel import INTERRUPT_REPEAT_S, CancelToken, interrupting


def test_interrupt_repeats_until_the_block_ends() -> None:
    token = CancelToken()
    calls: list[float] = []
    with interrupting(token, lambda: calls.append(time.perf_counter())):
        token.cancel()  # e.g. while the model is still being built
        time.sleep(8 * INTERRUPT_REPEAT_S)  # a solver starting now still gets interrupted
        inside = len(calls)
    time.sleep(4 * INTERRUPT_REPEAT_S)
    assert inside >= 3
    assert len(calls) <= inside + 1  # the repeats stop with the block


def test_already_cancelled_token_interrupts_at_once() -> None:
    token = CancelToken()
    token.cancel()
    calls: list[int] = []
    with interrupting(token, lambda: calls.append(1)):
        time.sleep(INTERRUPT_REPEAT_S / 2)
        assert calls


def test_nothing_happens_without_a_cancel() -> None:
    token = CancelToken()
    calls: list[int] = []
    with interrupting(token, lambda: calls.append(1)):
        time.sleep(2 * INTERRUPT_REPEAT_S)
    with interrupting(None, lambda: calls.append(1)):
        pass
    token.cancel()
    time.sleep(2 * INTERRUPT_REPEAT_S)
    assert calls == []
