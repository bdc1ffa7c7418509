"""A saved paper's note: one per saved paper, up to NOTE_MAX_CHARS, refused rather than cut."""

from __future__ import annotations

from django.utils import timezone

from .lists import LibraryError
from .models import SavedPaper

NOTE_MAX_CHARS = 10_000


def saved_paper_note_set(*, saved: SavedPaper, note: str) -> SavedPaper:
    """Replace the note (an empty one removes it). Longer than NOTE_MAX_CHARS is refused, not
    cut, so nothing the reader wrote is lost silently."""
    if len(note) > NOTE_MAX_CHARS:
        raise LibraryError(f"A note holds at most {NOTE_MAX_CHARS:,} characters.")
    saved.note = note.strip()
    saved.note_updated_at = timezone.now()
    saved.save(update_fields=["note", "note_updated_at"])
    return saved
