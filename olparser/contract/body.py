"""From request bytes and headers to parsed JSON: media type, bounded gzip, UTF-8, JSON syntax, duplicate keys.

Parsing takes a fast path (orjson) when it is sure to give what the exact path (the stdlib parser with a hook that
notices duplicate keys) would: orjson accepts the body and it has no duplicate key. Anything else (duplicate keys,
lone surrogates, integers past 64 bits, 1e400, errors) goes the exact path, so values, warnings and messages stay
the same.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass
from typing import Any, Mapping

import orjson

from olparser.contract.errors import IngestError
from olparser.contract.limits import IntakeLimits, over_limit

GZIP_MAGIC = b"\x1f\x8b"
BODY_SETTING = "setting MAX_EVENT_BYTES"
GZIP_INPUT_CHUNK = 64 * 1024  # compressed bytes fed per call: what a member boundary can cost to copy
UTF8_BOM = "\ufeff"
UTF8_BOM_BYTES = UTF8_BOM.encode("utf-8")
_ESCAPED_COLONS = (b"\\u003a", b"\\u003A")
FAST_PATH_MAX_BYTES = 1024 * 1024  # bigger bodies (a logical plan) go the exact way, which holds less in memory
_CONTROL_ESCAPE = re.compile(rb"\\(?:[bfnrt]|u00[01][0-9a-fA-F]|u007[fF])")
_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # a run of digits where an integer may pass 64 bits (orjson would read it as a float)
MAX_DUPLICATE_KEYS_REPORTED = 5

# Besides JSON media types (*/json, *+json, any parameters), what generic clients send by default is tolerated;
# any other Content-Type is refused with 415.
_TOLERATED_MEDIA_TYPES = frozenset({"", "*/*", "application/octet-stream", "text/plain"})
_IDENTITY_ENCODINGS = frozenset({"", "identity"})
_GZIP_ENCODINGS = frozenset({"gzip", "x-gzip"})


@dataclass(frozen=True)
class DecodedBody:
    """The parsed JSON value of a body and what was noticed on the way (duplicate keys). `by_orjson`: the fast path
    parsed it, so orjson can encode it too (every string valid Unicode, every number one orjson writes)."""

    value: Any
    warnings: tuple[str, ...]
    by_orjson: bool = False
    control_free: bool = False  # no string in it holds a control character (the body has none to decode)
    within_depth: bool = False  # known to nest no deeper than limits.max_depth (False: not known)


def header(headers: Mapping[str, str], name: str) -> str:
    """A header value looked up case-insensitively ("" when absent)."""
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), "")
    return str(value).strip()


def decode_body(body: bytes, headers: Mapping[str, str], limits: IntakeLimits) -> DecodedBody:
    """Check the media type, decompress (bounded), decode UTF-8 and parse JSON; raise IngestError naming the problem."""
    check_content_type(header(headers, "Content-Type"))
    body = decompress(body, header(headers, "Content-Encoding"), limits.max_body_bytes, limits.max_gzip_members)
    parsed = parse_fast(body)
    if parsed is not None:
        value, indented = parsed
        return DecodedBody(
            value,
            (),
            by_orjson=True,
            control_free=control_free(body),
            within_depth=indented_within(indented, limits.max_depth),
        )
    return parse_json(decode_utf8(body), limits.max_depth)


def indented_within(indented: bytes, max_depth: int) -> bool:
    """True when nothing nests deeper than `max_depth`, read off orjson's indented encoding of the value: a member of
    a container at depth d starts a line indented 2*d spaces (strings never hold a raw newline), so a container
    deeper than the limit starts a line indented 2*max_depth spaces or more. False when unsure: such a line holds a
    plain value (then the walk in reader.check_depth decides, and names the place)."""
    return b"\n" + b" " * (2 * max_depth) not in indented


def control_free(body: bytes) -> bool:
    """True when no string of this JSON can hold a control character (U+0000-U+001F, U+007F): JSON forbids them
    raw, except DEL, so they come only from an escape (\\n, \\u001f...) or a DEL byte; an escaped backslash
    before an n (\\\\n) only makes this say False."""
    return b"\x7f" not in body and (b"\\" not in body or _CONTROL_ESCAPE.search(body) is None)


def parse_fast(body: bytes) -> tuple[Any, bytes] | None:
    """The body parsed by orjson when that is exactly what `parse_json` would give without a warning, with orjson's
    indented encoding of it (read for the nesting depth too); else None.

    Integers: orjson reads those past 64 bits as floats, so a run of 19 digits or more (in a string too) is left to
    the exact path.

    Duplicate keys: orjson keeps the last value silently, so the colons are counted. Re-encoded (indented: the same
    colons), the parsed value has one colon per key kept plus those inside its strings; the body has one per key written plus those inside its
    strings, the dropped ones' included. Without escaped colons (\\u003a) in the body, equal counts mean no key was
    dropped.
    """
    if len(body) > FAST_PATH_MAX_BYTES:
        return None
    data = body[len(UTF8_BOM_BYTES) :] if body.startswith(UTF8_BOM_BYTES) else body
    if b"\\" in data and any(escaped in data for escaped in _ESCAPED_COLONS):
        return None
    if may_hold_long_integer(data):
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    try:
        indented = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes: the exact path refuses it by its depth
        return None
    if value is None or data.count(b":") != indented.count(b":"):
        return None
    return value, indented


def may_hold_long_integer(data: bytes) -> bool:
    """True when `data` has a run of 19 digits or more (in a string too): an integer there may pass 64 bits, which
    orjson reads as a float and json.loads as an int."""
    return _LONG_NUMBER in data.translate(_DIGITS_AS_ZEROS)


def parse_encoded(data: bytes) -> Any:
    """JSON the intake wrote itself (AcceptedEvent.to_json_bytes: no duplicate keys, valid Unicode), read as
    json.loads reads it: by orjson unless an integer may pass 64 bits or orjson refuses it (NaN), else by json.loads."""
    if not may_hold_long_integer(data):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def check_content_type(content_type: str) -> None:
    """415 unless the Content-Type is absent, JSON (with any parameters) or a type generic clients send by default."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type in _TOLERATED_MEDIA_TYPES or _is_json_media_type(media_type):
        return
    raise IngestError(415, f"unsupported Content-Type {media_type[:80]!r}: send application/json", "")


def _is_json_media_type(media_type: str) -> bool:
    return media_type.endswith("/json") or media_type.endswith("+json")


def decompress(
    body: bytes, content_encoding: str, max_body_bytes: int, max_members: int = IntakeLimits.max_gzip_members
) -> bytes:
    """The body, gunzipped when it starts with the gzip magic bytes or is declared gzip; 413 past `max_body_bytes`,
    400 past `max_members` gzip members."""
    encoding = content_encoding.lower()
    if encoding not in _IDENTITY_ENCODINGS and encoding not in _GZIP_ENCODINGS:
        raise IngestError(415, f"unsupported Content-Encoding {encoding[:40]!r}: send gzip or no encoding", "")
    if len(body) > max_body_bytes:
        message = f"body of {len(body)} bytes is larger than the limit of {max_body_bytes} bytes ({BODY_SETTING})"
        raise IngestError(413, message, "body")
    if body.startswith(GZIP_MAGIC):
        return gunzip_bounded(body, max_body_bytes, max_members)
    if encoding in _GZIP_ENCODINGS and body:
        raise IngestError(400, "Content-Encoding is gzip but the body is not gzip data", "body")
    return body


def gunzip_bounded(data: bytes, max_bytes: int, max_members: int = IntakeLimits.max_gzip_members) -> bytes:
    """Decompress every gzip member of `data`, never producing more than `max_bytes` + 1 bytes of output and never
    reading more than `max_members` members. Linear in the input: compressed bytes are fed in chunks from an offset,
    so a member boundary costs at most one chunk's copy (never the whole rest of the body), and trailing NUL padding
    after the last member is tolerated."""
    view = memoryview(data)
    size, pos = len(data), 0
    chunks: list[bytes] = []
    total = members = 0
    while pos < size:
        if not data.startswith(GZIP_MAGIC, pos):
            if data.count(0, pos) != size - pos:
                raise IngestError(400, "unexpected bytes after the end of the gzip stream", "body")
            break
        members += 1
        if members > max_members:
            message = f"body has more than {max_members:,} gzip members, {over_limit('max_gzip_members', max_members)}"
            raise IngestError(400, message, "body")
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            while not inflater.eof:
                if pos >= size:
                    raise IngestError(400, "gzip body is truncated: the compressed stream ends early", "body")
                piece = view[pos : pos + GZIP_INPUT_CHUNK]
                pos += len(piece)
                chunk = inflater.decompress(piece, max_bytes + 1 - total)
                total += len(chunk)
                if total > max_bytes:
                    message = f"body is larger than the limit of {max_bytes} bytes once decompressed ({BODY_SETTING})"
                    raise IngestError(413, message, "body")
                chunks.append(chunk)
        except zlib.error as exc:
            raise IngestError(400, f"body is not valid gzip data ({exc})", "body") from None
        pos -= len(inflater.unused_data)
    return b"".join(chunks)


def decode_utf8(body: bytes) -> str:
    """The body as text; 400 naming the byte offset when it is not UTF-8."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = body[exc.start : exc.start + 1].hex()
        raise IngestError(400, f"body is not valid UTF-8: byte 0x{bad} at offset {exc.start}", "body") from None
    return text[1:] if text.startswith(UTF8_BOM) else text


def parse_json(text: str, max_depth: int) -> DecodedBody:
    """Parse JSON text with the stdlib parser. Duplicate keys are tolerated (last wins) and reported as warnings."""
    if not text.strip():
        raise IngestError(400, "body is empty: expected an OpenLineage event as JSON", "body")
    duplicates: list[str] = []

    def build_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    duplicates.append(key)
                seen.add(key)
        return obj

    try:
        value = json.loads(text, object_pairs_hook=build_object, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise IngestError(400, _describe_syntax_error(exc, len(text)), "body") from None
    except RecursionError:
        raise IngestError(400, f"body is nested too deeply: the limit is {max_depth} levels", "body") from None
    except ValueError as exc:  # NaN / Infinity, or an integer with more digits than int() converts
        reason = "a number has too many digits" if "digits" in str(exc) else str(exc)[:80]
        raise IngestError(400, f"body is not valid JSON: {reason}", "body") from None
    return DecodedBody(value, _duplicate_warnings(duplicates))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _describe_syntax_error(exc: json.JSONDecodeError, length: int) -> str:
    where = f"line {exc.lineno} column {exc.colno} (char {exc.pos})"
    if exc.pos >= length or exc.msg.startswith("Unterminated string"):
        return f"body is not valid JSON: it ends early (truncated?) at {where}: {exc.msg}"
    return f"body is not valid JSON: {exc.msg} at {where}"


def _duplicate_warnings(duplicates: list[str]) -> tuple[str, ...]:
    if not duplicates:
        return ()
    names = list(dict.fromkeys(duplicates))
    shown = ", ".join(json.dumps(name[:80], ensure_ascii=True) for name in names[:MAX_DUPLICATE_KEYS_REPORTED])
    more = f" and {len(names) - MAX_DUPLICATE_KEYS_REPORTED} more" if len(names) > MAX_DUPLICATE_KEYS_REPORTED else ""
    return (f"duplicate JSON keys {shown}{more}: the last value of each was kept",)
