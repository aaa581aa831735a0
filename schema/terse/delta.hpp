// FORMAT.md §7.1: inside a records frame, each fixed-size argument is stored
// as its difference from the same argument of the same call site's previous
// record in that frame (integers: subtraction modulo their width; floats:
// XOR of their bits). Counters, repeated values and slowly moving floats
// turn into runs of zero bytes that zstd all but removes. Writer and reader
// share this one implementation, so the two directions cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <terse/schema.hpp>

namespace terse::wire {

// `follow` decodes without writing: the values end up in `previous` only.
enum class Delta { encode, decode, follow };

// What to do with each argument of a site, worked out once from its tags.
class DeltaPlan {
 public:
  // Fails (valid() is false) for a tag this version does not know.
  DeltaPlan(const std::uint8_t* tags, std::size_t count) {
    using schema::TypeTag;
    steps_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      auto tag = static_cast<TypeTag>(tags[i]);
      int width = schema::type_tag_size(tags[i]);
      if (width < 0) {
        valid_ = false;
        return;
      }
      Op op;
      if (tag == TypeTag::string) {
        op = Op::string;
      } else if (tag == TypeTag::structured) {
        op = Op::sized;  // FORMAT.md §8.1: never delta-coded, stepped over by its size
      } else if (tag == TypeTag::f80 || tag == TypeTag::f128) {
        op = Op::skip;  // rare; stored as they are
      } else if (tag == TypeTag::f32 || tag == TypeTag::f64) {
        op = width == 4 ? Op::xor4 : Op::xor8;
      } else {
        op = width == 1 ? Op::sub1 : width == 2 ? Op::sub2 : width == 4 ? Op::sub4 : Op::sub8;
      }
      steps_.push_back({op, static_cast<std::uint8_t>(width)});
    }
  }

  bool valid() const { return valid_; }
  std::size_t slots() const { return steps_.size(); }

  // Rewrites the arguments `args[0, size)` of one record in place.
  // `previous` holds one slot per argument, zero at the start of a frame.
  // Returns false when the bytes do not match the plan; the record is then
  // unusable either way.
  template <Delta direction>
  bool apply(unsigned char* args, std::size_t size, std::uint64_t* previous) const {
    return apply<direction>(args, args, size, previous);
  }

  // The values of a coded record, into `previous`, leaving its bytes as they are.
  bool follow(const unsigned char* args, std::size_t size, std::uint64_t* previous) const {
    return apply<Delta::follow>(const_cast<unsigned char*>(args), args, size, previous);
  }

  // The same from `in` to `out`, which either do not overlap or are equal.
  // The collector copies each record into its batch this way: coding the copy
  // in place would read fields back from the copy's wide stores, a
  // store-forwarding stall per field that cost more than the rest of the
  // collector's work.
  template <Delta direction>
  bool apply(unsigned char* out, const unsigned char* in, std::size_t size, std::uint64_t* previous) const {
    std::size_t at = 0;
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      const Step& step = steps_[i];
      if (size - at < step.width) return false;
      std::size_t length = step.width;
      switch (step.op) {
        case Op::string:
          length = schema::encoded_string_size(in + at, size - at);
          if (length == 0) return false;
          break;
        case Op::sized: {
          if (size - at < 4) return false;
          std::uint32_t value_size;
          std::memcpy(&value_size, in + at, 4);
          if (size - at - 4 < value_size) return false;
          length = 4 + std::size_t{value_size};
          break;
        }
        case Op::skip:
          break;
        case Op::sub1:
          field_delta<direction, std::uint8_t, false>(out + at, in + at, previous[i]);
          at += length;
          continue;
        case Op::sub2:
          field_delta<direction, std::uint16_t, false>(out + at, in + at, previous[i]);
          at += length;
          continue;
        case Op::sub4:
          field_delta<direction, std::uint32_t, false>(out + at, in + at, previous[i]);
          at += length;
          continue;
        case Op::sub8:
          field_delta<direction, std::uint64_t, false>(out + at, in + at, previous[i]);
          at += length;
          continue;
        case Op::xor4:
          field_delta<direction, std::uint32_t, true>(out + at, in + at, previous[i]);
          at += length;
          continue;
        case Op::xor8:
          field_delta<direction, std::uint64_t, true>(out + at, in + at, previous[i]);
          at += length;
          continue;
      }
      if (direction != Delta::follow && out != in) std::memcpy(out + at, in + at, length);  // stored as they are
      at += length;
    }
    return at == size;
  }

 private:
  enum class Op : std::uint8_t { string, sized, skip, sub1, sub2, sub4, sub8, xor4, xor8 };
  struct Step {
    Op op;
    std::uint8_t width;  // 0 for strings and structured values: their length is in their header
  };

  // Fixed-size copies compile to plain loads and stores.
  template <Delta direction, typename Word, bool bits>
  static void field_delta(unsigned char* out, const unsigned char* in, std::uint64_t& previous) {
    Word stored;
    std::memcpy(&stored, in, sizeof(Word));
    auto before = static_cast<Word>(previous);
    Word value;
    if constexpr (direction == Delta::encode) {
      value = stored;
      stored = bits ? static_cast<Word>(value ^ before) : static_cast<Word>(value - before);
    } else {
      value = bits ? static_cast<Word>(stored ^ before) : static_cast<Word>(stored + before);
      stored = value;
    }
    previous = value;
    if constexpr (direction != Delta::follow) std::memcpy(out, &stored, sizeof(Word));
  }

  std::vector<Step> steps_;
  bool valid_ = true;
};

}  // namespace terse::wire
