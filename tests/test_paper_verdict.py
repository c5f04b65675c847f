"""The verdict at the top of a paper: counted from the samples the page lists, graded by severity, the worst
departure named with its reason; the same record on the page, in the twin and on the home page."""

from __future__ import annotations

import re
from html import unescape

from paperproof.build.pages import CodeRef, TwinSample
from paperproof.build.paper_verdict import finding_grade, paper_verdict, sample_grade
from paperproof.catalogue.sample import Departure, Fidelity
from tests.sitecheck import load_json


def finding(departs: str | None = None, severity: str = "changes_ranking", rho: float | None = 0.5,
            metric: str = "confidence", measured: bool = True) -> Fidelity:
    worked = None
    if departs and measured:
        worked = Departure(lines=[3, 3], located=True, paper_formula="p", code_formula="c", case_id="typical",
                           inputs="", paper_value=0.0, code_value=1.0, worked="", same_ranking=severity == "rescales",
                           rank_correlation=rho, effect="", severity=severity)
    return Fidelity(output="return value", metric=metric, matches="variant" if departs else "paper", source="s",
                    paper=not departs, cases_matched=3, cases=3, departures=[departs] if departs else [], worked=worked)


def sample(entry: str, *findings: Fidelity, kind: str = "official", status: str = "ran",
           repo: str = "lab/code") -> TwinSample:
    ran = status.startswith("ran")
    return TwinSample(code_sha256_prefix="0" * 16, entry=entry, repo=repo, repo_kind=kind, path="m.py",
                      file_url="https://example.org/m.py", link_basis="behaviour", language="python", status=status,
                      verification_level=2 if ran else 0, contract_check=None, metamorphic_tier=None,
                      behaviour_fingerprint=False, licence="MIT", inline_ok=True,
                      code=CodeRef(code_sha256="0" * 64), url=f"/sample/{entry}/",
                      checked=("paper" if findings else "nothing") if ran else None, fidelity=list(findings))


def test_each_sample_takes_the_grade_of_its_most_severe_finding():
    assert finding_grade(finding()) == "faithful"
    assert finding_grade(finding("returns a count", "rescales", 1.0)) == "departs_rescales"
    assert finding_grade(finding("uses the last epoch", "changes_ranking", 0.2)) == "departs_ranking"
    # a departure no run measured: nothing shows it keeps the ranking
    assert finding_grade(finding("differs", measured=False)) == "departs_ranking"
    assert sample_grade([finding(), finding("returns a count", "rescales", 1.0)]) == "departs_rescales"
    assert sample_grade([finding("a", "rescales", 1.0), finding("b", "changes_ranking", 0.9)]) == "departs_ranking"
    assert sample_grade([]) is None


def test_the_verdict_counts_samples_checked_faithful_and_departing_and_names_the_worst():
    samples = [
        sample("faithful_one", finding(), finding(metric="variability")),
        sample("counts", finding("returns a count where the paper defines a fraction", "rescales", 1.0),
               status="ran_violates"),
        sample("late_norm", finding("takes the norm at the last epoch", "changes_ranking", 0.38), status="ran_violates"),
        sample("fork_norm", finding("squares the norm", "changes_ranking", 0.12), kind="listed", repo="someone/fork",
               status="ran_violates"),
        sample("helper"),  # ran, nothing recognised
        sample("loader", status="unverified"),
    ]
    verdict = paper_verdict(samples)
    assert (verdict.checked, verdict.faithful, verdict.departs_rescales, verdict.departs_ranking) == (4, 1, 1, 2)
    assert verdict.grade == "departs_ranking"
    assert verdict.worst is not None
    assert (verdict.worst.entry, verdict.worst.repo, verdict.worst.reason) == ("fork_norm", "someone/fork",
                                                                               "squares the norm")
    assert verdict.worst.rank_correlation == 0.12 and verdict.worst.url == "/sample/fork_norm/"
    assert verdict.text == (
        "4 of the 6 entries taken from this paper's code were checked against the paper: 1 faithful, 3 depart "
        "(2 change the ranking of the samples, 1 only rescales it). The worst: fork_norm (confidence, in "
        "someone/fork): squares the norm (Spearman ρ 0.12 against the paper's metric).")


def test_an_official_departure_is_named_before_an_equally_severe_one_elsewhere():
    same = [sample("theirs", finding("rescales it", "rescales", 1.0), kind="listed", repo="a/first"),
            sample("ours", finding("rescales it", "rescales", 1.0), repo="z/last")]
    verdict = paper_verdict(same)
    assert verdict.worst is not None and verdict.worst.entry == "ours" and verdict.grade == "departs_rescales"
    assert "in the official repository z/last" in verdict.text
    assert "none changes the ranking of the samples, 2 only rescale it" in verdict.text


def test_a_paper_with_nothing_checked_says_so_and_names_no_worst():
    nothing = paper_verdict([sample("helper"), sample("loader", status="unverified")])
    assert (nothing.checked, nothing.worst, nothing.grade) == (0, None, "not_checked")
    assert nothing.text.startswith("None of the 2 entries taken from this paper's code was checked against the paper")
    faithful = paper_verdict([sample("one", finding())])
    assert faithful.grade == "faithful" and faithful.worst is None
    assert faithful.text == ("1 of the 1 entry taken from this paper's code was checked against the paper: "
                             "1 faithful, none departs.")
    empty = paper_verdict([])
    assert (empty.checked, empty.grade) == (0, "not_checked") and empty.text.startswith("No code of this paper")


# --- on the bundled site: page, twin and home page say the same ---


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html))).strip()


def test_the_twin_page_and_home_page_carry_the_verdict_of_the_samples_they_list(bundled_site):
    samples = {p.stem: load_json(p) for p in (bundled_site / "sample").glob("*.json")}
    index = load_json(bundled_site / "index.json")
    listed = {p["url"]: p for p in index["papers"]}
    graded = {}
    for path in sorted((bundled_site / "paper").glob("*.json")):
        twin = load_json(path)
        verdict = twin["verdict"]
        own = [samples[s["code"]["url"].removeprefix("/sample/").removesuffix(".json")]
               for s in twin["verification"]["samples"]]
        grades = [sample_grade([Fidelity.model_validate(f) for f in r["fidelity"]]) for r in own]
        assert verdict["checked"] == sum(1 for r in own if r.get("checked") == "paper") == twin["verification"].get(
            "checked", {}).get("paper", 0), path.stem
        assert [verdict[g] for g in ("faithful", "departs_rescales", "departs_ranking")] == [
            grades.count(g) for g in ("faithful", "departs_rescales", "departs_ranking")], path.stem
        if verdict["departs_rescales"] + verdict["departs_ranking"]:
            worst = verdict["worst"]
            record = next(r for r in own if r["entry"] == worst["entry"] and r["repo"] == worst["repo"])
            assert worst["reason"] in [d for f in record["fidelity"] for d in f["departures"]]
        else:
            assert verdict["worst"] is None
        page = (bundled_site / "paper" / path.stem / "index.html").read_text()
        top = page[page.index("<h1>"):page.index('aria-labelledby="code"')]  # before anything but the facts
        assert verdict["text"] in _text(top), path.stem
        # official rows first, in the samples table and side by side
        kinds = [s["repo_kind"] for s in twin["verification"]["samples"]]
        assert kinds == sorted(kinds, key=lambda k: k != "official"), path.stem
        rows = [i["repo_kind"] for i in twin["verification"].get("implementations", [])]
        assert rows == sorted(rows, key=lambda k: k != "official"), path.stem
        assert listed[twin["url"]]["verdict"] == verdict
        graded[twin["url"]] = verdict["grade"]
    assert set(graded.values()) >= {"departs_ranking", "faithful"}
    # the home page: counts by grade; papers listed under the heading of their grade, none that departs as faithful
    assert sum(index["paper_grades"].values()) == len(index["verified"])
    assert index["paper_grades"] == {g: n for g in ("faithful", "departs_rescales", "departs_ranking", "not_checked")
                                     if (n := list(graded.values()).count(g))}
    home = (bundled_site / "index.html").read_text()
    section = home[home.index('id="verified"'):home.index('aria-labelledby="papers"')]
    headings = re.split(r'<h3 id="verified-', section)[1:]
    assert headings
    for part in headings:
        grade = part.split('"', 1)[0]
        urls = re.findall(r'<li><a href="([^"]+)"', part)
        assert urls and all(graded[u] == grade for u in urls), grade
    assert "Verified papers" not in home


def test_no_ran_count_includes_violations_and_no_badge_contradicts_its_line(bundled_site, samples):
    index = load_json(bundled_site / "index.json")
    for paper in index["papers"]:
        assert "ran" not in paper  # a count of every `ran*` status read as "ran"
        twin = load_json(bundled_site / paper["json_url"].lstrip("/"))
        assert paper["statuses"] == twin["verification"]["summary"]
    home = _text((bundled_site / "index.html").read_text())
    for paper in index["papers"]:
        if paper["samples"]:
            said = ", ".join(f"{n} {status}" for status, n in paper["statuses"].items())
            assert f"{paper['samples']} samples: {said}" in home
    # a sample checked against the paper never says, beside its badge, that there was nothing to check
    checked = [r for r in samples.values() if r.get("checked") == "paper" and not r["reason"].startswith("Stale")]
    assert checked and not [r["entry"] for r in checked if "nothing declared to check" in r["reason"]]
    assert any("checked against the paper's definition" in r["reason"] for r in checked)
    page = (bundled_site / "paper" / "specimen-mapping-sample-hardness-with-training" / "index.html").read_text()
    rows = re.findall(r"<tr>.*?</tr>", page[page.index('<table class="samples'):], re.S)
    for row in rows:
        if "checked-paper" in row or "grade-" in row:
            assert "nothing declared to check" not in row


def test_a_finding_recorded_before_three_verdicts_reads_as_exact_or_departure_by_its_departures() -> None:
    faithful, departing = finding(), finding("returns a count")
    assert (faithful.verdict, departing.verdict) == ("exact", "departure")
    old = departing.model_dump(mode="json", exclude={"verdict", "estimate", "orientation"})
    assert Fidelity.model_validate(old).verdict == "departure"
    assert Fidelity.model_validate({**old, "verdict": "estimator"}).verdict == "estimator"
    # an estimator of the paper's definition grades as faithful: its error is the estimator's, not a departure
    assert finding_grade(faithful.model_copy(update={"verdict": "estimator"})) == "faithful"
