//===- Npy.cpp - Read and write NumPy .npy files --------------------------===//
//
// A `.npy` file is: the magic "\x93NUMPY", a major and a minor version byte, the header length (uint16 for
// 1.0, uint32 for 2.0 and 3.0, little-endian), the header (the repr of a Python dict with keys 'descr',
// 'fortran_order' and 'shape', padded with spaces and a newline), then the raw element data.
//
// The header is parsed with a small parser for Python literals rather than by pattern matching, so that
// whatever NumPy (or a Python 2 era NumPy, or a hand-written file) puts there is either understood or
// rejected with a precise message. Everything read from the file is checked before it is trusted: lengths
// against the file size, dimensions against overflow, and the element count against the data present, so
// the only large allocation is the tensor itself, and only once the file is known to hold its data.
//
//===----------------------------------------------------------------------===//

#include "la/runtime/Npy.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace la;

namespace {

constexpr llvm::StringLiteral kMagic("\x93NUMPY");
/// What every "unsupported descr" message lists.
constexpr llvm::StringLiteral kSupportedDescrs("'<f2' (f16), '<f4' (f32), '<f8' (f64), and '<u2' read as "
                                               "bf16 or f16 bit patterns when the caller asks for it");
constexpr llvm::StringLiteral kExpectedKeys("a .npy header has exactly the keys 'descr', 'fortran_order' "
                                            "and 'shape'");
/// Python literals nest at most this deep before the header is rejected; the recursive parser would
/// otherwise overflow the stack on a header of a million '('.
constexpr unsigned kMaxNesting = 32;
/// Messages quote at most this much of the header.
constexpr size_t kMaxQuote = 80;

llvm::Error npyError(llvm::StringRef name, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), name + ": " + message);
}

/// `text` escaped and shortened for an error message.
std::string quote(llvm::StringRef text) {
  std::string result;
  llvm::raw_string_ostream os(result);
  os << '"';
  llvm::printEscapedString(text.take_front(kMaxQuote), os);
  if (text.size() > kMaxQuote)
    os << "...";
  os << '"';
  return result;
}

//===----------------------------------------------------------------------===//
// Python literal parser
//===----------------------------------------------------------------------===//

/// A Python literal as far as a .npy header needs one.
struct PyValue {
  enum class Kind { Str, Int, Float, Bool, None, Tuple, List, Dict };
  Kind kind = Kind::None;
  /// The literal as written in the header, for messages.
  llvm::StringRef source;
  /// Str: the decoded string.
  std::string str;
  /// Int: magnitude and sign; `overflow` if the magnitude does not fit in int64_t.
  uint64_t magnitude = 0;
  bool negative = false;
  bool overflow = false;
  /// Bool.
  bool boolean = false;
  /// Tuple, List: the elements. Dict: keys and values alternating.
  std::vector<PyValue> items;
};

class LiteralParser {
public:
  explicit LiteralParser(llvm::StringRef text) : text(text) {}

  /// Parses `text` as exactly one literal (surrounded by whitespace). On failure returns nullopt and sets
  /// `error`.
  std::optional<PyValue> parseAll() {
    std::optional<PyValue> value = parseValue(0);
    if (!value)
      return std::nullopt;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the end of the literal");
    return value;
  }

  std::string error;

private:
  llvm::StringRef text;
  size_t pos = 0;

  std::nullopt_t fail(const llvm::Twine &message) {
    error = (message + " at offset " + llvm::Twine(pos) + " of " + quote(text.rtrim())).str();
    return std::nullopt;
  }

  void skipSpace() {
    while (pos < text.size() && llvm::is_contained(llvm::StringRef(" \t\n\r\f\v"), text[pos]))
      ++pos;
  }

  static bool isTokenChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '.' || c == '+' || c == '-'; }

  std::optional<PyValue> parseValue(unsigned depth) {
    if (depth > kMaxNesting)
      return fail("literals nested too deeply");
    skipSpace();
    if (pos == text.size())
      return fail("unexpected end of header");
    size_t start = pos;
    std::optional<PyValue> value;
    char c = text[pos];
    if (c == '{')
      value = parseSequence(depth, '}', PyValue::Kind::Dict);
    else if (c == '(')
      value = parseSequence(depth, ')', PyValue::Kind::Tuple);
    else if (c == '[')
      value = parseSequence(depth, ']', PyValue::Kind::List);
    else if (c == '\'' || c == '"')
      value = parseString();
    else
      value = parseToken();
    // Containers and strings get their full text here; a parenthesised scalar, "(3)", keeps its own.
    if (value && value->source.empty())
      value->source = text.slice(start, pos);
    return value;
  }

  /// Dict, tuple or list, starting at the opening bracket.
  std::optional<PyValue> parseSequence(unsigned depth, char close, PyValue::Kind kind) {
    PyValue result;
    result.kind = kind;
    ++pos;
    bool sawComma = false;
    while (true) {
      skipSpace();
      if (pos < text.size() && text[pos] == close)
        break;
      if (!result.items.empty() && !sawComma)
        return fail(llvm::Twine("expected ',' or '") + llvm::Twine(close) + "'");
      std::optional<PyValue> item = parseValue(depth + 1);
      if (!item)
        return std::nullopt;
      result.items.push_back(std::move(*item));
      if (kind == PyValue::Kind::Dict) {
        skipSpace();
        if (pos == text.size() || text[pos] != ':')
          return fail("expected ':' after a dict key");
        ++pos;
        std::optional<PyValue> entry = parseValue(depth + 1);
        if (!entry)
          return std::nullopt;
        result.items.push_back(std::move(*entry));
      }
      skipSpace();
      sawComma = pos < text.size() && text[pos] == ',';
      if (sawComma)
        ++pos;
    }
    ++pos; // The closing bracket.
    // Python reads "(3)" as the integer 3; only "(3,)" is a one-element tuple.
    if (kind == PyValue::Kind::Tuple && result.items.size() == 1 && !sawComma) {
      PyValue inner = std::move(result.items.front());
      return inner;
    }
    return result;
  }

  std::optional<PyValue> parseString() {
    char quoteChar = text[pos++];
    PyValue result;
    result.kind = PyValue::Kind::Str;
    while (true) {
      if (pos == text.size() || text[pos] == '\n')
        return fail("unterminated string");
      char c = text[pos++];
      if (c == quoteChar)
        return result;
      if (c == '\\') {
        // Only the escapes a dtype descr could plausibly contain; anything else is kept verbatim, which
        // can only make an (already unsupported) descr compare unequal.
        if (pos == text.size())
          return fail("unterminated string");
        c = text[pos++];
        if (c == 'n')
          c = '\n';
        else if (c == 't')
          c = '\t';
        else if (c != '\\' && c != '\'' && c != '"')
          result.str += '\\';
      }
      result.str += c;
    }
  }

  /// True, False, None, or a number.
  std::optional<PyValue> parseToken() {
    size_t start = pos;
    while (pos < text.size() && isTokenChar(text[pos]))
      ++pos;
    llvm::StringRef token = text.slice(start, pos);
    if (token.empty())
      return fail(llvm::Twine("unexpected character '") + llvm::Twine(text[pos]) + "'");
    PyValue result;
    result.source = token;
    if (token == "True" || token == "False") {
      result.kind = PyValue::Kind::Bool;
      result.boolean = token == "True";
      return result;
    }
    if (token == "None") {
      result.kind = PyValue::Kind::None;
      return result;
    }
    llvm::StringRef digits = token;
    bool negative = digits.consume_front("-");
    if (!negative)
      digits.consume_front("+");
    // Python 2 NumPy wrote long integers as "3L".
    if (!digits.consume_back("L"))
      digits.consume_back("l");
    if (!digits.empty() && llvm::all_of(digits, llvm::isDigit)) {
      result.kind = PyValue::Kind::Int;
      result.negative = negative;
      for (char d : digits) {
        uint64_t digit = d - '0';
        if (result.magnitude > (uint64_t(INT64_MAX) - digit) / 10) {
          result.overflow = true;
          break;
        }
        result.magnitude = result.magnitude * 10 + digit;
      }
      return result;
    }
    double unused;
    if (!token.getAsDouble(unused, /*AllowInexact=*/true)) {
      result.kind = PyValue::Kind::Float;
      return result;
    }
    pos = start;
    return fail("unexpected token '" + token + "'");
  }
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Reverses the bytes of each element in place. Only big-endian hosts need it: .npy data here is
/// little-endian.
void swapElements(std::byte *data, size_t numBytes, size_t elementSize) {
  for (size_t i = 0; i + elementSize <= numBytes; i += elementSize)
    std::reverse(data + i, data + i + elementSize);
}

/// Maps a descr string to the dtype it is read as, or explains why it is not supported.
llvm::Expected<DType> parseDescr(llvm::StringRef name, const PyValue &descr, std::optional<DType> reinterpretU2As) {
  if (descr.kind != PyValue::Kind::Str)
    return npyError(name, "unsupported descr " + quote(descr.source) + " (structured or non-string dtype); " +
                              "supported: " + kSupportedDescrs);
  llvm::StringRef d = descr.str;
  if (d == "<f2")
    return DType::F16;
  if (d == "<f4")
    return DType::F32;
  if (d == "<f8")
    return DType::F64;
  if (d == "<u2") {
    if (!reinterpretU2As)
      return npyError(name, "descr '<u2' (uint16) is read only as the bit patterns of a 16-bit float, and the "
                            "caller did not ask for that (reinterpretU2As); bf16 tensors are stored as "
                            "arr.view(np.uint16)");
    if (dtypeSize(*reinterpretU2As) != 2)
      return npyError(name, "'<u2' data cannot be reinterpreted as " + dtypeName(*reinterpretU2As) +
                                ", only as a 16-bit float (bf16 or f16)");
    return *reinterpretU2As;
  }
  if (d.size() == 3 && d[0] == '>' && llvm::is_contained(llvm::StringRef("fu"), d[1]))
    return npyError(name,
                    "big-endian data ('" + d + "') is not supported; save arr.astype('<" + d.substr(1) + "') instead");
  std::string hint;
  if (d.ends_with("V2"))
    hint = "; bfloat16 must be saved as its bit patterns, arr.view(np.uint16), and read with "
           "reinterpretU2As = bf16";
  return npyError(name, "unsupported descr '" + d + "'; supported: " + kSupportedDescrs + hint);
}

/// Checks the 'shape' value and returns the dims.
llvm::Expected<llvm::SmallVector<int64_t, 4>> parseShape(llvm::StringRef name, const PyValue &shape) {
  if (shape.kind != PyValue::Kind::Tuple)
    return npyError(name, "shape must be a tuple of integers, got " + quote(shape.source));
  llvm::SmallVector<int64_t, 4> dims;
  for (auto [i, dim] : llvm::enumerate(shape.items)) {
    if (dim.kind != PyValue::Kind::Int)
      return npyError(name, "dimension " + llvm::Twine(i) + " of shape " + quote(shape.source) +
                                " is not an integer: " + quote(dim.source));
    if (dim.negative && dim.magnitude != 0)
      return npyError(name, "negative dimension " + dim.source + " in shape " + quote(shape.source));
    if (dim.overflow)
      return npyError(name, "dimension " + llvm::Twine(i) + " of shape " + quote(shape.source) +
                                " overflows a 64-bit integer");
    dims.push_back(static_cast<int64_t>(dim.magnitude));
  }
  // Any zero dim makes the tensor empty whatever the others are, as in NumPy; otherwise multiply with an
  // overflow check, since a corrupt shape must not wrap around to a small, plausible count.
  if (llvm::is_contained(dims, 0))
    return dims;
  uint64_t count = 1;
  for (int64_t dim : dims) {
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return npyError(name, "shape " + quote(shape.source) +
                                " overflows: its element count does not fit "
                                "in 64 bits");
  }
  if (count > static_cast<uint64_t>(kNpyMaxElements))
    return npyError(name, "shape " + quote(shape.source) + " has " + llvm::Twine(count) +
                              " elements, more than 2^34 elements (the limit)");
  return dims;
}

} // namespace

llvm::Expected<HostTensor> la::parseNpy(llvm::StringRef bytes, llvm::StringRef name,
                                        std::optional<DType> reinterpretU2As) {
  // Magic and version.
  if (!bytes.starts_with(kMagic)) {
    return npyError(name, "not a .npy file: bad magic " + quote(bytes.take_front(kMagic.size())) +
                              " (expected \"\\93NUMPY\")");
  }
  if (bytes.size() < kMagic.size() + 2)
    return npyError(name, "truncated header: the file ends inside the format version");
  unsigned major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3)
    return npyError(name, "unsupported format version " + llvm::Twine(major) + "." + llvm::Twine(minor) +
                              " (supported: 1.0, 2.0, 3.0)");

  // Header length: uint16 in 1.0, uint32 since 2.0.
  size_t lengthSize = major == 1 ? 2 : 4;
  size_t prefixSize = kMagic.size() + 2 + lengthSize;
  if (bytes.size() < prefixSize)
    return npyError(name, "truncated header: the file ends inside the header length");
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthSize; ++i)
    headerLength |= uint64_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  if (headerLength > kNpyMaxHeaderBytes)
    return npyError(name, "huge header length " + llvm::Twine(headerLength) +
                              " (the limit is 1 MiB); the file is corrupt or not a .npy file");
  if (headerLength > bytes.size() - prefixSize)
    return npyError(name, "header length " + llvm::Twine(headerLength) + " runs past the end of the file (" +
                              llvm::Twine(bytes.size()) + " bytes)");
  llvm::StringRef header = bytes.substr(prefixSize, headerLength);
  llvm::StringRef data = bytes.substr(prefixSize + headerLength);

  // The header dict.
  LiteralParser parser(header);
  std::optional<PyValue> dict = parser.parseAll();
  if (!dict)
    return npyError(name, "header is not a Python dict literal: " + parser.error);
  if (dict->kind != PyValue::Kind::Dict)
    return npyError(name, "header is not a Python dict literal: " + quote(header.trim()));
  const PyValue *descr = nullptr, *fortranOrder = nullptr, *shape = nullptr;
  for (size_t i = 0; i + 1 < dict->items.size(); i += 2) {
    const PyValue &key = dict->items[i];
    const PyValue *value = &dict->items[i + 1];
    const PyValue **slot = nullptr;
    if (key.kind == PyValue::Kind::Str) {
      if (key.str == "descr")
        slot = &descr;
      else if (key.str == "fortran_order")
        slot = &fortranOrder;
      else if (key.str == "shape")
        slot = &shape;
    }
    if (!slot)
      return npyError(name, "unexpected key " + key.source + " in header (" + kExpectedKeys + ")");
    if (*slot)
      return npyError(name, "duplicate key " + key.source + " in header");
    *slot = value;
  }
  for (auto [key, value] : {std::pair{"descr", descr}, {"fortran_order", fortranOrder}, {"shape", shape}})
    if (!value)
      return npyError(name, llvm::Twine("missing key '") + key + "' in header (" + kExpectedKeys + ")");

  llvm::Expected<DType> dtype = parseDescr(name, *descr, reinterpretU2As);
  if (!dtype)
    return dtype.takeError();
  llvm::Expected<llvm::SmallVector<int64_t, 4>> dims = parseShape(name, *shape);
  if (!dims)
    return dims.takeError();
  TensorSpec spec{*dtype, std::move(*dims)};

  if (fortranOrder->kind != PyValue::Kind::Bool)
    return npyError(name, "fortran_order must be True or False, got " + quote(fortranOrder->source));
  // Fortran and C order lay out the same bytes when at most one dim exceeds 1 (or there are no elements),
  // so only reject the files whose data would really be read transposed.
  bool sameLayout = spec.numElements() == 0 || llvm::count_if(spec.shape, [](int64_t d) { return d > 1; }) <= 1;
  if (fortranOrder->boolean && !sameLayout)
    return npyError(name, "fortran_order is True, but C (row-major) order is required; save "
                          "np.ascontiguousarray(arr) instead of arr");

  // The data must be exactly what the header declares.
  size_t expected = spec.numBytes();
  if (data.size() < expected)
    return npyError(name, "truncated data: header declares " + spec.str() + " (" + llvm::Twine(expected) +
                              " bytes) but the file has " + llvm::Twine(data.size()) + " after the header");
  if (data.size() > expected)
    return npyError(name, "trailing data: header declares " + spec.str() + " (" + llvm::Twine(expected) +
                              " bytes) but the file has " + llvm::Twine(data.size() - expected) +
                              " more bytes after them; are several arrays saved into one file?");

  HostTensor tensor(spec);
  if (expected != 0)
    std::memcpy(tensor.data(), data.data(), expected);
  if (llvm::sys::IsBigEndianHost)
    swapElements(static_cast<std::byte *>(tensor.data()), expected, dtypeSize(spec.dtype));
  return tensor;
}

llvm::Expected<HostTensor> la::readNpy(llvm::StringRef path, std::optional<DType> reinterpretU2As) {
  // No null terminator: it would force a copy instead of a mapping for files of a page-multiple size.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return npyError(path, "cannot read: " + buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path, reinterpretU2As);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// The descr a tensor of `dtype` is written with.
static llvm::StringRef descrFor(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return "<u2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  }
  llvm_unreachable("unknown DType");
}

std::string la::npyHeader(const TensorSpec &spec) {
  // The same text, spacing and padding as numpy.save, so that files written here are byte-identical to
  // NumPy's: Python's repr of the shape tuple ("()", "(3,)", "(2, 3)"), then spare spaces that let NumPy
  // grow the first axis in place, then padding so the data starts at a multiple of 64 bytes.
  std::string dict = "{'descr': '" + descrFor(spec.dtype).str() + "', 'fortran_order': False, 'shape': (";
  for (auto [i, dim] : llvm::enumerate(spec.shape)) {
    dict += (i ? ", " : "") + std::to_string(dim);
  }
  dict += spec.shape.size() == 1 ? ",), }" : "), }";
  constexpr size_t growthAxisMaxDigits = 21;
  if (!spec.shape.empty())
    dict.append(growthAxisMaxDigits - std::min(growthAxisMaxDigits, std::to_string(spec.shape[0]).size()), ' ');

  auto wrap = [&](unsigned major, size_t lengthSize) -> std::optional<std::string> {
    size_t withNewline = dict.size() + 1;
    size_t padding = 64 - (kMagic.size() + 2 + lengthSize + withNewline) % 64;
    uint64_t length = withNewline + padding;
    if (lengthSize == 2 && length > 0xffff)
      return std::nullopt;
    std::string result = kMagic.str();
    result += static_cast<char>(major);
    result += '\0';
    for (size_t i = 0; i < lengthSize; ++i)
      result += static_cast<char>((length >> (8 * i)) & 0xff);
    result += dict;
    result.append(padding, ' ');
    result += '\n';
    return result;
  };
  // Version 1.0 unless the header does not fit its 16-bit length, as NumPy does.
  if (std::optional<std::string> v1 = wrap(1, 2))
    return *v1;
  return *wrap(2, 4);
}

llvm::Error la::writeNpy(llvm::StringRef path, const TensorRef &tensor) {
  const TensorSpec &spec = tensor.spec;
  if (llvm::any_of(spec.shape, [](int64_t dim) { return dim < 0; }))
    return npyError(path, "cannot write " + spec.str() + ": negative dimension");
  // A zero anywhere makes the tensor empty, however large the other dims are.
  uint64_t count = llvm::is_contained(spec.shape, 0) ? 0 : 1;
  for (int64_t dim : spec.shape)
    if (count != 0 && __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      return npyError(path, "cannot write " + spec.str() + ": the element count overflows");
  uint64_t numBytes;
  if (__builtin_mul_overflow(count, uint64_t(dtypeSize(spec.dtype)), &numBytes) || numBytes > SIZE_MAX)
    return npyError(path, "cannot write " + spec.str() + ": the size overflows");
  if (numBytes != 0 && !tensor.data)
    return npyError(path, "cannot write " + spec.str() + ": the data pointer is null");

  // Write next to the destination, so that the final rename stays within one file system and is atomic.
  // (Not sys::fs::TempFile: its removal on signals installs process-wide signal handlers, a surprising side
  // effect for a library inside someone else's program. A crash mid-write leaves "<path>.tmp-XXXXXXXX".)
  int fd;
  llvm::SmallString<128> tempPath;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tempPath))
    return npyError(path, "cannot create a temporary file next to it: " + ec.message());

  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << npyHeader(spec);
    const char *data = static_cast<const char *>(tensor.data);
    if (llvm::sys::IsLittleEndianHost) {
      os.write(data, numBytes);
    } else {
      // Swap through a bounded buffer rather than a copy of the whole tensor.
      size_t elementSize = dtypeSize(spec.dtype);
      std::vector<std::byte> chunk(elementSize * 4096);
      for (uint64_t offset = 0; offset < numBytes; offset += chunk.size()) {
        size_t n = std::min<uint64_t>(chunk.size(), numBytes - offset);
        std::memcpy(chunk.data(), data + offset, n);
        swapElements(chunk.data(), n, elementSize);
        os.write(reinterpret_cast<const char *>(chunk.data()), n);
      }
    }
    // Closing reports errors the last buffered write or close itself hit (e.g. a full disk).
    os.close();
    writeError = os.error();
    os.clear_error(); // Reported below; raw_fd_ostream would otherwise abort in its destructor.
  }
  if (writeError) {
    llvm::sys::fs::remove(tempPath);
    return npyError(path, "cannot write " + tempPath + ": " + writeError.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, path)) {
    llvm::sys::fs::remove(tempPath);
    return npyError(path, "cannot move the temporary file " + tempPath + " into place: " + ec.message());
  }
  return llvm::Error::success();
}

llvm::Error la::writeNpy(llvm::StringRef path, const HostTensor &tensor) {
  // The view is only read; TensorRef has no const flavour.
  return writeNpy(path, TensorRef{const_cast<void *>(tensor.data()), tensor.spec()});
}
