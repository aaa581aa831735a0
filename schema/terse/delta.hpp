// FORMAT.md §7.1: inside a records frame, each fixed-size argument is stored
// as its difference from the same argument of the same call site's previous
// record in that frame (integers: subtraction modulo their width; floats:
// XOR of their bits). Counters, repeated values and slowly moving floats
// turn into runs of zero bytes that zstd all but removes. Writer and reader
// share this one implementation, so the two directions cannot drift apart.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <terse/schema.hpp>
#include <terse/wire.hpp>

namespace terse::wire {

// A structured value's bytes, its size header included (FORMAT.md §8.1); 0
// when they are not all there.
inline std::size_t structured_value_size(const unsigned char* in, std::size_t available) {
  if (available < 4) return 0;
  std::uint32_t value_size;
  std::memcpy(&value_size, in, 4);
  if (available - 4 < value_size) return 0;
  return 4 + std::size_t{value_size};
}

// `follow` decodes without writing: the values end up in `previous` only.
enum class Delta { encode, decode, follow };

// One fixed-size argument, which DeltaPlan and the unrolled coders share.
// Fixed-size copies compile to plain loads and stores.
template <Delta direction, typename Word, bool bits>
inline void field_delta(unsigned char* out, const unsigned char* in, std::uint64_t& previous) noexcept {
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
    plan_runs();
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
    std::size_t run_index = 0;
    for (std::size_t i = 0; i < steps_.size();) {
      const Step& step = steps_[i];
      if (step.op == Op::string || step.op == Op::sized) {
        std::size_t length = variable_size(step.op, in + at, size - at);
        if (length == 0) return false;
        if (direction != Delta::follow && out != in) wire::copy_short(out + at, in + at, length);  // stored as they are
        at += length;
        ++i;
        continue;
      }
      const Run& run = runs_[run_index++];
      if (size - at < run.bytes) return false;
      if (size - at >= run.wide_span) {
        if (direction != Delta::follow && out != in && run.has_skipped) std::memcpy(out + at, in + at, run.bytes);
        const Field* field = fields_.data() + run.first_field;
        for (const Field* end = field + run.fields; field != end; ++field)
          wide_delta<direction>(out + at + field->offset, in + at + field->offset, *field, previous[field->slot]);
      } else {
        for (std::size_t j = i, offset = at; j < i + run.steps; offset += steps_[j].width, ++j)
          narrow_step<direction>(steps_[j], out + offset, in + offset, previous[j]);
      }
      at += run.bytes;
      i += run.steps;
    }
    return at == size;
  }

 private:
  enum class Op : std::uint8_t { string, sized, skip, sub1, sub2, sub4, sub8, xor4, xor8 };
  struct Step {
    Op op;
    std::uint8_t width;  // 0 for strings and structured values: their length is in their header
  };
  // Fixed-size arguments one after another: their offsets are known from
  // the run's start, and each is coded with one 8-byte load and store when
  // 8 bytes from its start are still the record's. A switch per argument
  // cost an indirect jump each, most of the coding's time.
  struct Run {
    std::uint32_t steps = 0;
    std::uint32_t bytes = 0;
    std::uint32_t wide_span = 0;  // the bytes from the run's start that its wide loads and stores reach
    std::uint32_t first_field = 0;
    std::uint32_t fields = 0;  // the coded ones: skipped ones are copied with the run
    bool has_skipped = false;
  };
  struct Field {
    std::uint32_t offset;  // from the run's start
    std::uint32_t slot;
    std::uint64_t mask;  // the argument's bytes within the 8 loaded
    bool bits;           // XOR (floats), else subtraction
  };

  void plan_runs() {
    for (std::size_t i = 0; i < steps_.size();) {
      if (steps_[i].op == Op::string || steps_[i].op == Op::sized) {
        ++i;
        continue;
      }
      Run run;
      run.first_field = static_cast<std::uint32_t>(fields_.size());
      for (; i < steps_.size() && steps_[i].op != Op::string && steps_[i].op != Op::sized; ++i) {
        const Step& step = steps_[i];
        ++run.steps;
        if (step.op == Op::skip) {
          run.has_skipped = true;
        } else {
          std::uint64_t mask = step.width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * step.width)) - 1;
          fields_.push_back(
              {run.bytes, static_cast<std::uint32_t>(i), mask, step.op == Op::xor4 || step.op == Op::xor8});
          run.wide_span = run.bytes + 8;
        }
        run.bytes += step.width;
      }
      run.fields = static_cast<std::uint32_t>(fields_.size()) - run.first_field;
      run.wide_span = std::max(run.wide_span, run.bytes);
      runs_.push_back(run);
    }
  }

  // A string's or structured value's bytes, header included; 0 when they
  // are not all there.
  static std::size_t variable_size(Op op, const unsigned char* in, std::size_t available) {
    return op == Op::string ? schema::encoded_string_size(in, available) : structured_value_size(in, available);
  }

  // The bytes past the argument go back as they were read, so that the
  // arguments after it, coded next, are found unchanged.
  template <Delta direction>
  static void wide_delta(unsigned char* out, const unsigned char* in, const Field& field, std::uint64_t& previous) {
    std::uint64_t word;
    std::memcpy(&word, in, 8);
    std::uint64_t stored = word & field.mask;
    std::uint64_t value;
    if constexpr (direction == Delta::encode) {
      value = stored;
      stored = (field.bits ? value ^ previous : value - previous) & field.mask;
    } else {
      value = (field.bits ? stored ^ previous : stored + previous) & field.mask;
      stored = value;
    }
    previous = value;
    if constexpr (direction != Delta::follow) {
      word = stored | (word & ~field.mask);
      std::memcpy(out, &word, 8);
    }
  }

  template <Delta direction>
  static void narrow_step(const Step& step, unsigned char* out, const unsigned char* in, std::uint64_t& previous) {
    switch (step.op) {
      case Op::sub1:
        return field_delta<direction, std::uint8_t, false>(out, in, previous);
      case Op::sub2:
        return field_delta<direction, std::uint16_t, false>(out, in, previous);
      case Op::sub4:
        return field_delta<direction, std::uint32_t, false>(out, in, previous);
      case Op::sub8:
        return field_delta<direction, std::uint64_t, false>(out, in, previous);
      case Op::xor4:
        return field_delta<direction, std::uint32_t, true>(out, in, previous);
      case Op::xor8:
        return field_delta<direction, std::uint64_t, true>(out, in, previous);
      default:  // skipped: stored as they are
        if (direction != Delta::follow && out != in) std::memcpy(out, in, step.width);
        return;
    }
  }

  std::vector<Step> steps_;
  std::vector<Run> runs_;  // in the order of their steps
  std::vector<Field> fields_;
  bool valid_ = true;
};

// DeltaPlan::apply<Delta::encode> unrolled for one call site's tags, known
// at compile time there: no plan to walk, offsets and widths constant up to
// the first string. A call site hands its instance to the runtime, whose IO
// thread codes every record this way (through DeltaPlan it was a quarter of
// the IO threads' time). schema_test holds the two to the same bytes for
// every tag; the decoder has only DeltaPlan, which must stay the reference.
using DeltaEncoder = bool (*)(unsigned char* out, const unsigned char* in, std::size_t size,
                              std::uint64_t* previous) noexcept;

namespace delta_detail {

template <std::uint8_t tag>
inline bool encode_argument(unsigned char* out, const unsigned char* in, std::size_t size, std::size_t& at,
                            std::uint64_t& previous) noexcept {
  using schema::TypeTag;
  constexpr auto type = static_cast<TypeTag>(tag);
  constexpr int width = schema::type_tag_size(tag);
  static_assert(width >= 0, "a tag this version does not know");
  if constexpr (type == TypeTag::string || type == TypeTag::structured) {
    // FORMAT.md §8.1: a structured value is never delta-coded, only stepped over.
    std::size_t length = type == TypeTag::string ? schema::encoded_string_size(in + at, size - at)
                                                 : structured_value_size(in + at, size - at);
    if (length == 0) return false;
    wire::copy_short(out + at, in + at, length);
    at += length;
    return true;
  } else {
    if (size - at < static_cast<std::size_t>(width)) return false;
    if constexpr (type == TypeTag::f80 || type == TypeTag::f128) {
      std::memcpy(out + at, in + at, width);  // rare; stored as they are
    } else if constexpr (type == TypeTag::f32) {
      field_delta<Delta::encode, std::uint32_t, true>(out + at, in + at, previous);
    } else if constexpr (type == TypeTag::f64) {
      field_delta<Delta::encode, std::uint64_t, true>(out + at, in + at, previous);
    } else if constexpr (width == 1) {
      field_delta<Delta::encode, std::uint8_t, false>(out + at, in + at, previous);
    } else if constexpr (width == 2) {
      field_delta<Delta::encode, std::uint16_t, false>(out + at, in + at, previous);
    } else if constexpr (width == 4) {
      field_delta<Delta::encode, std::uint32_t, false>(out + at, in + at, previous);
    } else {
      field_delta<Delta::encode, std::uint64_t, false>(out + at, in + at, previous);
    }
    at += width;
    return true;
  }
}

}  // namespace delta_detail

// `out` and `in` do not overlap. False when the bytes do not match the tags.
template <auto Tags>
bool encode_deltas(unsigned char* out, const unsigned char* in, std::size_t size, std::uint64_t* previous) noexcept {
  std::size_t at = 0;
  bool ok = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return (true && ... && delta_detail::encode_argument<Tags[I]>(out, in, size, at, previous[I]));
  }
  (std::make_index_sequence<Tags.size()>());
  return ok && at == size;
}

}  // namespace terse::wire
