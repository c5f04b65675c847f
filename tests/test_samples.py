"""What a sample says it checked: the paper's definition, only its own contracts, or nothing."""

from paperproof.catalogue.sample import CHECKED_VOCABULARY, Fidelity
from paperproof.verify.samples import checked
from paperproof.verify.verdict import Verdict

FOUND = Fidelity(output="return value", metric="confidence", matches="mean_gold_prob", source="Data Maps",
                 paper=True, cases_matched=2, cases=2)


def test_a_recognised_output_means_checked_against_the_paper():
    assert checked(Verdict("ran", "returned"), [FOUND]) == "paper"
    assert checked(Verdict("ran_violates", "departs", "VIOLATES"), [FOUND]) == "paper"


def test_a_contract_without_a_recognised_metric_is_contracts_only():
    assert checked(Verdict("ran", "returned; its contract holds", "PASSES"), []) == "contracts"
    assert checked(Verdict("ran_draft_wrong", "draft", "OUTPUT_MISDECLARED"), []) == "contracts"


def test_a_bare_ran_says_nothing_was_checked():
    assert checked(Verdict("ran", "returned; nothing declared to check"), []) == "nothing"
    assert checked(Verdict("ran_fixture", "raised at its boundary", "RAISES"), []) == "nothing"


def test_a_sample_that_did_not_run_checked_nothing_at_all():
    assert checked(Verdict("unverified", "not run"), [FOUND]) is None
    assert set(CHECKED_VOCABULARY) == {"paper", "contracts", "nothing"}
