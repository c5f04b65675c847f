"""Normalising code-link URLs: every spelling of one repository lands on one key."""

from __future__ import annotations

import pytest

from paperproof.catalogue.repo_url import normalise_repo_url, safe_key

SAME_REPOSITORY = [
    "https://github.com/Alice/Repo",
    "https://github.com/alice/repo",
    "http://github.com/Alice/Repo/",
    "https://www.github.com/Alice/Repo",
    "https://GitHub.com/Alice/Repo.git",
    "https://github.com/Alice/Repo.git/",
    "github.com/Alice/Repo",
    "  https://github.com/Alice/Repo  ",
    "<https://github.com/Alice/Repo>",
    "https://github.com/Alice/Repo?tab=readme-ov-file",
    "https://github.com/Alice/Repo#readme",
    "https://github.com/Alice/Repo/tree/main",
    "https://github.com/Alice/Repo/tree/v1.2/src/models",
    "https://github.com/Alice/Repo/blob/master/train.py",
    "https://github.com/Alice/Repo/raw/main/data.csv",
    "https://github.com/Alice/Repo/issues/3",
    "https://github.com/Alice/Repo/releases/tag/v1",
    "https://raw.githubusercontent.com/Alice/Repo/main/train.py",
    "git@github.com:Alice/Repo.git",
    "ssh://git@github.com/Alice/Repo.git",
    "git://github.com/Alice/Repo.git",
    "git+https://github.com/Alice/Repo.git",
]


@pytest.mark.parametrize("url", SAME_REPOSITORY)
def test_spellings_of_one_repository_share_a_key(url: str) -> None:
    key = normalise_repo_url(url)
    assert key.key == "github.com/alice/repo"
    assert key.host == "github.com" and key.is_github
    assert key.dirname.lower() == "alice+repo"


def test_display_case_is_kept_and_url_is_canonical() -> None:
    key = normalise_repo_url("https://www.GitHub.com/Alice/Repo.git/")
    assert (key.owner, key.name, key.url) == ("Alice", "Repo", "https://github.com/Alice/Repo")


@pytest.mark.parametrize("url, ref, subpath", [
    ("https://github.com/a/b/tree/main/src/x", "main", "src/x"),
    ("https://github.com/a/b/blob/0123abc/train.py", "0123abc", "train.py"),
    ("https://github.com/a/b/tree/dev", "dev", None),
    ("https://raw.githubusercontent.com/a/b/main/f.py", "main", "f.py"),
    ("https://github.com/a/b", None, None),
])
def test_file_and_folder_links_keep_where_they_pointed(url: str, ref: str | None, subpath: str | None) -> None:
    key = normalise_repo_url(url)
    assert (key.ref, key.subpath, key.key) == (ref, subpath, "github.com/a/b")


@pytest.mark.parametrize("url, key", [
    ("https://gitlab.com/group/project", "gitlab.com/group/project"),
    ("https://gitlab.com/group/project.git", "gitlab.com/group/project"),
    ("https://gitlab.com/group/project/-/tree/main/src", "gitlab.com/group/project"),
    ("https://bitbucket.org/Team/Tool/src/master/", "bitbucket.org/team/tool"),
    ("https://alice.github.io/project/", "alice.github.io/project"),
    ("https://gist.github.com/alice/0123456789abcdef", "gist.github.com/alice/0123456789abcdef"),
    ("git@gitlab.com:group/project.git", "gitlab.com/group/project"),
])
def test_other_hosts_are_recorded_as_such(url: str, key: str) -> None:
    parsed = normalise_repo_url(url)
    assert parsed.key == key and not parsed.is_github


@pytest.mark.parametrize("url", [
    "https://github.com/alice",
    "https://github.com/",
    "https://github.com/orgs/alice/repositories",
    "https://github.com/topics/deep-learning",
    "https://github.com/alice/..",
    "https://github.com/al ice/repo",
    "",
])
def test_links_without_a_repository_are_refused_by_name(url: str) -> None:
    with pytest.raises(ValueError) as refused:
        normalise_repo_url(url)
    assert repr(url) in str(refused.value)


def test_safe_key_is_the_key_of_a_repository_link_and_none_for_a_link_to_none() -> None:
    key = safe_key("https://github.com/Alice/Repo.git/tree/main/src")
    assert key == normalise_repo_url("https://github.com/Alice/Repo.git/tree/main/src")
    assert key is not None and (key.key, key.repo, key.ref, key.subpath) == ("github.com/alice/repo", "Alice/Repo", "main", "src")
    assert safe_key("https://github.com/topics/deep-learning") is None
    assert safe_key("") is None
