"""The manifest's record of the published files: listed by the staging units, recorded as the staging tree is
finished, made the site's on promotion, and the units of damaged files forgotten so a build renders them again."""

from __future__ import annotations

from paperproof.build.manifest import Manifest


def staged(tmp_path) -> Manifest:
    manifest = Manifest(tmp_path / "manifest.sqlite")
    manifest.new_stage(from_site=False)
    manifest.mark_pending([("paper/a/index.html", ["paper/a/index.html", "paper/a.json"]),
                           ("pagefind/1/", ["pagefind/1/pagefind-entry.json"])])
    manifest.mark_done([("paper/a/index.html", b"A", ["paper/a/index.html", "paper/a.json"], None),
                        ("pagefind/1/", b"S", ["pagefind/1/pagefind-entry.json", "pagefind/1/fragment/x"], None)])
    manifest.commit()
    return manifest


def test_listed_files_come_in_path_order_with_what_the_site_recorded(tmp_path):
    manifest = staged(tmp_path)
    assert list(manifest.listed()) == [
        ("pagefind/1/fragment/x", "pagefind/1/", None, None, None),
        ("pagefind/1/pagefind-entry.json", "pagefind/1/", None, None, None),
        ("paper/a.json", "paper/a/index.html", None, None, None),
        ("paper/a/index.html", "paper/a/index.html", None, None, None)]
    manifest.record_files([("paper/a.json", "paper/a/index.html", 3, 30, b"j"),
                           ("paper/a/index.html", "paper/a/index.html", 5, 50, b"h")])
    manifest.promote()
    assert list(manifest.site_files()) == [("paper/a.json", 3, 30, b"j"), ("paper/a/index.html", 5, 50, b"h")]
    manifest.new_stage(from_site=True)
    assert [row[2:] for row in manifest.listed() if row[0].startswith("paper/")] == [(3, 30, b"j"), (5, 50, b"h")]


def test_the_units_of_damaged_files_lose_their_digest(tmp_path):
    manifest = staged(tmp_path)
    manifest.record_files([("paper/a.json", "paper/a/index.html", 3, 30, b"j"),
                           ("pagefind/1/fragment/x", "pagefind/1/", 1, 10, b"x")])
    manifest.promote()
    manifest.new_stage(from_site=True)
    manifest.refresh([("paper/a.json", 4, 40)])
    assert ("paper/a.json", 4, 40, b"j") in list(manifest.site_files())
    assert manifest.forget(["pagefind/1/fragment/x", "not/recorded"]) == ["pagefind/1/"]
    for table in ("site_units", "stage_units"):
        assert manifest.lookup(table, ["pagefind/1/", "paper/a/index.html"]) == {
            "pagefind/1/": (None, None), "paper/a/index.html": (b"A", None)}


def test_a_manifest_without_a_file_record_is_started_again(tmp_path):
    manifest = staged(tmp_path)
    manifest.db.execute("DROP TABLE site_files")
    manifest.set("format", "3")
    manifest.commit()
    manifest.close()
    again = Manifest(tmp_path / "manifest.sqlite")
    assert again.lookup("site_units", ["paper/a/index.html"]) == {} and list(again.site_files()) == []
    assert not again.has_stage()
