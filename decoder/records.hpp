// A records payload's layout and a record's arguments (FORMAT.md §7, §8),
// read the same way by the records the decoder gives and by the context
// pushes it only follows. Internal to the decoder.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <terse/decoder.hpp>
#include <terse/result.hpp>
#include <terse/wire.hpp>

namespace terse::decoder::detail {

// FORMAT.md §7 and §7.4: where a records payload's rows (and, in a columnar
// one, its tick column) start; false when the payload is too short for them.
bool split_records(std::string_view payload, bool columnar, std::uint64_t& base_ticks, wire::ByteReader& ticks,
                   wire::ByteReader& rows);

// Parses a record's arguments, all of `r`, by its site's tags. Structured
// values are checked against their expressions here, once, so that
// rendering can trust them; a failure says what did not match. `texts` are
// the file's text entries; a cut string's kept bytes and mark, or a patched
// string's bytes, go into `marked`, which its argument's text then refers to.
Result<> parse_args(wire::ByteReader& r, const Site& site, const std::unordered_map<std::uint32_t, std::string>& texts,
                    std::vector<Arg>& args, std::vector<std::string>& marked);

}  // namespace terse::decoder::detail
