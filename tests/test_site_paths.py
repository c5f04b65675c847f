"""The folders beside the site are named as the workflow and the docs know them."""

from __future__ import annotations

from pathlib import Path

from paperproof.build.site_paths import SitePaths


def test_the_folders_beside_the_site_are_named_for_it():
    paths = SitePaths(Path("/srv/www/site"))
    named = {"staging": paths.staging, "previous": paths.previous, "trash": paths.trash, "lock": paths.lock,
             "state": paths.state, "extra": paths.extra}
    assert {k: str(v) for k, v in named.items()} == {
        "staging": "/srv/www/.site.staging", "previous": "/srv/www/.site.previous", "trash": "/srv/www/.site.trash",
        "lock": "/srv/www/.site.lock", "state": "/srv/www/.site.build", "extra": "/srv/www/.site.extra"}
    assert paths.cached() == (Path("/srv/www/site"), Path("/srv/www/.site.staging"), Path("/srv/www/.site.previous"))
    assert len({paths.out, *named.values()}) == 7  # no two roles share a path
