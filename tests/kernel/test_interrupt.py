"""SIGINT during `do_execute`: raises in running code, cancels an awaited task."""

import asyncio
import os
import signal
import threading

import pytest

from myia_kernel.kernel import cancel_on_sigint

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signal handlers need the main thread")


def test_sigint_while_awaiting_cancels_the_task():
    async def main():
        task = asyncio.ensure_future(asyncio.sleep(30))
        with cancel_on_sigint(task, lambda: False):
            asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGINT)
            with pytest.raises(asyncio.CancelledError):
                await task
        return task.cancelled()

    assert asyncio.run(main())


def test_sigint_while_running_code_raises_keyboard_interrupt():
    async def main():
        task = asyncio.ensure_future(asyncio.sleep(0))
        with cancel_on_sigint(task, lambda: True):
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(10_000_000):  # the handler runs between bytecodes
                    pass
        await task

    asyncio.run(main())


def test_the_previous_handler_comes_back():
    before = signal.getsignal(signal.SIGINT)

    async def main():
        task = asyncio.ensure_future(asyncio.sleep(0))
        with cancel_on_sigint(task, lambda: False):
            assert signal.getsignal(signal.SIGINT) is not before
        await task

    asyncio.run(main())
    assert signal.getsignal(signal.SIGINT) is before
