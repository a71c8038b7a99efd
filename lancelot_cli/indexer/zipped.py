"""Reading the zipped XML of an Office document or an EPUB safely: a damaged archive or a member
that inflates past a bound is an error with a reason, and XML is parsed with no network access,
no external entities and libxml2's usual depth and size limits."""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# A member of a document that inflates past this is a zip bomb, not a chapter or a slide.
MAX_MEMBER_BYTES = 64 * 1024 * 1024
RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"


class ZipError(Exception):
    """The archive cannot be read; the message says why."""


@contextmanager
def open_zip(raw: bytes, what: str) -> Iterator[zipfile.ZipFile]:
    """The archive in ``raw``; ``what`` names what it should be, with its article ("an EPUB book")."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise ZipError(f"not {what}: {exc}") from None
    with archive:
        yield archive


def read_member(archive: zipfile.ZipFile, name: str) -> bytes:
    """The bytes of one member, bounded by ``MAX_MEMBER_BYTES``."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ZipError(f"{name} is missing from the archive") from None
    if info.file_size > MAX_MEMBER_BYTES:
        raise ZipError(f"{name} inflates to {info.file_size:,} bytes (more than {MAX_MEMBER_BYTES:,})")
    try:
        with archive.open(info) as member:
            data = member.read(MAX_MEMBER_BYTES + 1)  # the header's size may lie
    except (zipfile.BadZipFile, OSError, NotImplementedError) as exc:  # a bad CRC, an unknown method
        raise ZipError(f"cannot read {name}: {exc}") from None
    if len(data) > MAX_MEMBER_BYTES:
        raise ZipError(f"{name} inflates to more than {MAX_MEMBER_BYTES:,} bytes")
    return data


def parse_xml(data: bytes, name: str) -> Any:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        return etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise ZipError(f"{name} is not well-formed XML: {exc}") from None


def read_xml(archive: zipfile.ZipFile, name: str) -> Any:
    """The root element of an XML member."""
    return parse_xml(read_member(archive, name), name)


def relations(archive: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str]]:
    """An Office part's relationships: id -> (the target's member name, the relationship type)."""
    folder, base = posixpath.split(part)
    name = posixpath.join(folder, "_rels", f"{base}.rels")
    if name not in archive.namelist():
        return {}
    found = {}
    for rel in read_xml(archive, name).iterfind(f"{{{RELATIONSHIPS}}}Relationship"):
        target = rel.get("Target") or ""
        if rel.get("TargetMode") == "External" or not target:
            continue
        member = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        found[rel.get("Id") or ""] = (member, rel.get("Type") or "")
    return found
