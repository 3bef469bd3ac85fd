"""Every program of the corpus runs on the VM with plain Python's results."""

import pytest

import myia
from tests.compare import assert_same
from tests.corpus import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_on_vm(case):
    want = case.fn(*case.args)
    got = myia.compile(case.fn, backend="vm")(*case.args)
    assert_same(got, want)
