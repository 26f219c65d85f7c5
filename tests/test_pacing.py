"""Pacing from X-RateLimit headers, on a fake clock: spend the budget, then wait for the reset."""

from __future__ import annotations

import threading

from sync.datadog.pacing import Pacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


def _headers(remaining: int, reset: int) -> dict[str, str]:
    return {"X-RateLimit-Remaining": str(remaining), "X-RateLimit-Reset": str(reset), "X-RateLimit-Limit": "5"}


def test_requests_go_while_the_budget_lasts_then_wait_for_the_reset() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=2, reset=3))
    for remaining in (1, 0):
        pacer.acquire("w")
        pacer.release("w", _headers(remaining=remaining, reset=3))
    assert clock.slept == []
    pacer.acquire("w")
    assert clock.slept == [3.0]
    assert pacer.waited == 3.0


def test_a_late_answer_with_an_older_count_does_not_raise_the_budget() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=0, reset=2))
    pacer.release("w", _headers(remaining=4, reset=2))  # sent earlier, answered later
    pacer.acquire("w")
    assert clock.slept == [2.0]


def test_a_429_empties_the_budget_until_the_reset() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=3, reset=5), limited=True)
    pacer.acquire("w")
    assert clock.slept == [5.0]


def test_groups_have_their_own_budgets_and_missing_headers_change_nothing() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("write")
    pacer.release("write", _headers(remaining=0, reset=4))
    pacer.acquire("read")
    pacer.release("read", {})
    pacer.acquire("read")
    assert clock.slept == []


def test_once_every_answer_is_in_the_count_is_exact_and_no_budget_is_lost() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=10, reset=3))
    pacer.acquire("w")
    pacer.acquire("w")
    # The server counted both before answering the first; while the second is in flight obs cannot know.
    pacer.release("w", _headers(remaining=8, reset=3))
    pacer.release("w", _headers(remaining=8, reset=3))
    for remaining in range(7, -1, -1):
        pacer.acquire("w")
        pacer.release("w", _headers(remaining=remaining, reset=3))
    assert clock.slept == []  # eight more, where subtracting the answer in flight would have left seven
    pacer.acquire("w")
    assert clock.slept == [3.0]


def test_a_spent_budget_waits_for_the_answers_in_flight_before_the_reset() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=1, reset=3))
    pacer.acquire("w")  # in flight; the estimate is now 0
    went = threading.Event()

    def go() -> None:
        pacer.acquire("w")
        went.set()

    waiting = threading.Thread(target=go)
    waiting.start()
    assert not went.wait(0.05)  # held back while the answer is out
    pacer.release("w", _headers(remaining=4, reset=3))  # the answer says there is room
    assert went.wait(2.0)
    waiting.join()
    assert clock.slept == []


def test_time_held_back_counts_once_across_waiting_for_answers_and_for_the_reset() -> None:
    clock = Clock()
    pacer = Pacer(clock, clock.sleep)
    pacer.acquire("w")
    pacer.release("w", _headers(remaining=1, reset=3))
    pacer.acquire("w")
    waiting = threading.Thread(target=pacer.acquire, args=("w",))
    waiting.start()
    waiting.join(0.05)
    clock.now += 2  # the answer takes two seconds, and says the window is spent: wait out the last second
    pacer.release("w", _headers(remaining=0, reset=1))
    waiting.join(2.0)
    assert not waiting.is_alive()
    assert clock.slept == [1.0] and pacer.waited == 3.0
