"""problemgen.outputs: what a run into an earlier run's folder removes, and what it must never touch."""

from __future__ import annotations

import os
from pathlib import Path

from problemgen.outputs import files_matching, remove_stale


def _tree(root, *paths):
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(path)


def test_stale_matches_go_and_the_folders_they_leave_empty_with_them(tmp_path):
    _tree(tmp_path, "handouts/a/worksheet.md", "handouts/b/worksheet.md", "handouts/c/worksheet.md",
          "handouts/c/notes.txt", "handouts/a/worksheet.txt")
    removal = remove_stale(tmp_path, ["handouts/*/worksheet.md"], {"handouts/a/worksheet.md"})
    assert removal.removed == ["handouts/b/worksheet.md", "handouts/c/worksheet.md"] and removal.failed == []
    assert not (tmp_path / "handouts" / "b").exists()
    assert sorted(p.name for p in (tmp_path / "handouts").iterdir()) == ["a", "c"]  # c keeps a user's file
    assert (tmp_path / "handouts/a/worksheet.txt").exists() and (tmp_path / "handouts/c/notes.txt").exists()


def test_links_are_neither_followed_nor_removed(tmp_path):
    """A folder or file reached through a link is not ours, and may lie outside the folder the user named."""
    outside = tmp_path / "outside"
    _tree(outside, "x/worksheet.md", "worksheet.md")
    root = tmp_path / "out"
    (root / "handouts").mkdir(parents=True)
    (root / "handouts" / "linked").symlink_to(outside / "x", target_is_directory=True)
    (root / "worksheet.md").symlink_to(outside / "worksheet.md")
    patterns = ["handouts/*/worksheet.md", "worksheet.md"]
    assert files_matching(root, patterns) == set()
    assert remove_stale(root, patterns, set()).removed == []
    assert (outside / "x/worksheet.md").exists() and (outside / "worksheet.md").exists()


def test_a_written_file_found_under_another_name_is_kept(tmp_path):
    """On a case-insensitive file system the earlier run's ``Ana.md`` is the file this run wrote as ``ana.md``;
    a hard link stands in for it here: removing the other name would remove this run's output."""
    _tree(tmp_path, "ana.md")
    os.link(tmp_path / "ana.md", tmp_path / "Ana.md")
    assert remove_stale(tmp_path, ["*.md"], {"ana.md"}).removed == []
    assert (tmp_path / "Ana.md").exists()


def test_a_file_that_cannot_be_removed_is_named_and_the_rest_go(tmp_path, monkeypatch):
    _tree(tmp_path, "r1.md", "r2.md")
    unlink = Path.unlink

    def refuse_r1(path, *args, **kwargs):
        if path.name == "r1.md":
            raise PermissionError(13, "Permission denied")
        return unlink(path, *args, **kwargs)

    monkeypatch.setattr(Path, "unlink", refuse_r1)
    removal = remove_stale(tmp_path, ["*.md"], set(), shown_as="reports/")
    assert removal.removed == ["r2.md"]
    assert removal.failed == ["reports/r1.md is left by an earlier run and could not be removed (Permission denied)"]
