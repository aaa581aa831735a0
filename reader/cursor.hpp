// Cursors for pipelines (`--show-cursor`, `--after-cursor`): where every
// input of a run stands, as a string a shipper stores and hands back after a
// restart. Callers must treat it as opaque.
//
// Version 3, what terse prints: "3." then the base64url (RFC 4648 §5,
// without padding) of
//
//   cursor := count:varint entry{count} check:u32
//   entry  := dir:u32 writer:u64 name_length:varint name frame_offset:varint
//             frame_index:varint ticks:varint
//
// with one entry per input (one writer's files of one NAME in one
// directory) that has given a record: `dir` is the FNV-1a hash of its
// directory's absolute path (logs of one NAME in two directories are told
// apart by it, and a cursor stays short whatever the paths; 0 when not
// known, for a place carried over from a version 1 cursor), `writer` the
// writer's hash (writer_hash; 0 when not known), `name` the file's name,
// never a path, then the record's Position (position.hpp). Varints are
// LEB128, u32 and u64 are little-endian, and `check` is the FNV-1a hash of
// every byte before it, so a cursor that was cut or changed is refused
// instead of read as another place.
//
// Version 2 is version 3 without `writer` ("2." before the base64url): from
// before writers were told apart, when the files of one NAME were read in
// sequence order whoever wrote them. It is still read: its place holds for
// the writer of the file it names, and every other writer of that NAME in
// that directory goes on at its first file after that one.
//
// Version 1 (one log only, from before merged cursors) is still read: "1",
// then the name in hex, the frame offset, the index and the ticks in
// lowercase hex, joined by "-".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <terse/result.hpp>

#include "position.hpp"

namespace terse::input {

std::string encode_cursor(const std::vector<InputPosition>& inputs);

// Version 2, for the tests of reading cursors older terse printed.
std::string encode_cursor_v2(const std::vector<InputPosition>& inputs);

using Cursor = Position;

std::string encode_cursor_v1(const Cursor& c);

// Nothing for a string that is not a cursor of version 1.
std::optional<Cursor> decode_cursor_v1(const std::string& text);

// The places a cursor names; a failure says what is wrong when it is not a
// cursor.
Result<std::vector<InputPosition>> parse_cursor(const std::string& text);

}  // namespace terse::input
