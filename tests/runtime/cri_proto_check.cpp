// cri_proto_check: fails when our CRI subset (proto/cri.proto) drifts from the upstream
// Kubernetes CRI api.proto.
//
//   cri_proto_check <our cri.proto> <upstream api.proto>
//
// Every message, field (number, type, label, referenced type), enum value and RPC (input and
// output types, streaming) of our file must exist upstream and be identical there; anything
// upstream has and we do not is fine, since proto3 skips unknown fields. Each difference is
// printed on its own line, naming the message, field, enum or method.
//
// Both files go through protoc --descriptor_set_out rather than an in-process parser because
// Debian's libprotobuf-dev ships no compiler/importer.h. The upstream file imports gogo.proto
// and sets gogoproto options that only affect Go code; a copy without those lines is compiled.
//
// Exit status: 0 match, 1 drift, 2 usage or tool failure, 77 (skip) when the upstream file is
// absent (runtime_env.sh fetch has not run).
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

namespace {

namespace fs = std::filesystem;
namespace pb = google::protobuf;

constexpr int kExitDrift = 1;
constexpr int kExitFailure = 2;
constexpr int kExitSkip = 77;

// A directory under $TMPDIR removed with everything in it when the check ends.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "cri_proto_check.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string Trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : line.substr(first);
}

// The upstream file without its gogo.proto import and file-level gogoproto options. Any other
// use of gogoproto (e.g. a field option) is not stripped and stops the check with its line.
std::string WithoutGogoOptions(const std::string& upstream, const fs::path& name) {
  std::istringstream in(upstream);
  std::string stripped;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string trimmed = Trimmed(line);
    if (trimmed.starts_with("import \"github.com/gogo/protobuf/") ||
        trimmed.starts_with("option (gogoproto.")) {
      stripped += "\n";  // keeps protoc's line numbers equal to the original's
      continue;
    }
    if (line.find("gogoproto") != std::string::npos)
      throw std::runtime_error(name.string() + ":" + std::to_string(line_number) +
                               ": gogoproto used in a form this check does not strip: " + trimmed);
    stripped += line + "\n";
  }
  return stripped;
}

// Runs protoc on `proto` and returns the descriptor set it writes.
pb::FileDescriptorSet CompileWithProtoc(const fs::path& proto, const fs::path& output) {
  const std::string include_arg = "--proto_path=" + proto.parent_path().string();
  const std::string output_arg = "--descriptor_set_out=" + output.string();
  const std::string file_arg = proto.string();
  std::vector<char*> argv = {const_cast<char*>(DRANET_PROTOC_PATH), const_cast<char*>(include_arg.c_str()),
                             const_cast<char*>(output_arg.c_str()), const_cast<char*>(file_arg.c_str()),
                             nullptr};
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    execv(argv[0], argv.data());
    std::cerr << "exec " << argv[0] << ": " << std::strerror(errno) << "\n";
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(DRANET_PROTOC_PATH) + " failed on " + proto.string());

  pb::FileDescriptorSet set;
  std::ifstream in(output, std::ios::binary);
  if (!set.ParseFromIstream(&in)) throw std::runtime_error("cannot parse " + output.string());
  return set;
}

// Builds the single file of `set` into `pool` (neither file has imports once stripped).
const pb::FileDescriptor* BuildFile(const pb::FileDescriptorSet& set, pb::DescriptorPool& pool,
                                    const fs::path& source) {
  if (set.file_size() != 1)
    throw std::runtime_error(source.string() + ": expected one file in the descriptor set, got " +
                             std::to_string(set.file_size()));
  const pb::FileDescriptor* file = pool.BuildFile(set.file(0));
  if (file == nullptr) throw std::runtime_error(source.string() + ": descriptor pool rejected the file");
  return file;
}

// Describes a field's type the way a reader compares it: "string", "message runtime.v1.X".
std::string TypeOf(const pb::FieldDescriptor& field) {
  std::string type = field.type_name();
  if (field.message_type() != nullptr) type += " " + field.message_type()->full_name();
  if (field.enum_type() != nullptr) type += " " + field.enum_type()->full_name();
  return type;
}

std::string LabelOf(const pb::FieldDescriptor& field) {
  if (field.is_map()) return "map";
  if (field.is_repeated()) return "repeated";
  if (field.has_optional_keyword()) return "optional";
  return "singular";
}

// Collects every difference between our file and upstream; counts what matched.
class DriftReport {
 public:
  explicit DriftReport(const pb::DescriptorPool& upstream) : upstream_(upstream) {}

  void CompareFile(const pb::FileDescriptor& ours) {
    for (int i = 0; i < ours.enum_type_count(); ++i) CompareEnum(*ours.enum_type(i));
    for (int i = 0; i < ours.message_type_count(); ++i) CompareMessage(*ours.message_type(i));
    for (int i = 0; i < ours.service_count(); ++i) CompareService(*ours.service(i));
  }

  const std::vector<std::string>& problems() const { return problems_; }
  std::string Summary() const {
    return std::to_string(messages_) + " messages, " + std::to_string(fields_) + " fields, " +
           std::to_string(enums_) + " enums, " + std::to_string(methods_) + " RPCs";
  }

 private:
  void Problem(std::string text) { problems_.push_back(std::move(text)); }

  void CompareEnum(const pb::EnumDescriptor& ours) {
    ++enums_;
    const pb::EnumDescriptor* theirs = upstream_.FindEnumTypeByName(ours.full_name());
    if (theirs == nullptr) return Problem("enum " + ours.full_name() + ": absent upstream");
    for (int i = 0; i < ours.value_count(); ++i) {
      const pb::EnumValueDescriptor& value = *ours.value(i);
      const pb::EnumValueDescriptor* their_value = theirs->FindValueByName(value.name());
      const std::string where = "enum value " + ours.full_name() + "." + value.name();
      if (their_value == nullptr)
        Problem(where + ": absent upstream");
      else if (their_value->number() != value.number())
        Problem(where + ": number " + std::to_string(value.number()) + " here, " +
                std::to_string(their_value->number()) + " upstream");
    }
  }

  void CompareMessage(const pb::Descriptor& ours) {
    ++messages_;
    const pb::Descriptor* theirs = upstream_.FindMessageTypeByName(ours.full_name());
    if (theirs == nullptr) return Problem("message " + ours.full_name() + ": absent upstream");
    for (int i = 0; i < ours.field_count(); ++i) CompareField(*ours.field(i), *theirs);
    // Nested types include the generated XxxEntry messages of map fields.
    for (int i = 0; i < ours.nested_type_count(); ++i) CompareMessage(*ours.nested_type(i));
    for (int i = 0; i < ours.enum_type_count(); ++i) CompareEnum(*ours.enum_type(i));
  }

  void CompareField(const pb::FieldDescriptor& ours, const pb::Descriptor& their_message) {
    ++fields_;
    const std::string where = "field " + ours.full_name();
    const pb::FieldDescriptor* theirs = their_message.FindFieldByName(ours.name());
    if (theirs == nullptr) {
      const pb::FieldDescriptor* same_number = their_message.FindFieldByNumber(ours.number());
      std::string problem = where + " (number " + std::to_string(ours.number()) + "): absent upstream";
      if (same_number != nullptr) problem += "; upstream that number is " + same_number->name();
      return Problem(problem);
    }
    if (theirs->number() != ours.number())
      Problem(where + ": number " + std::to_string(ours.number()) + " here, " +
              std::to_string(theirs->number()) + " upstream");
    if (TypeOf(*theirs) != TypeOf(ours))
      Problem(where + ": type " + TypeOf(ours) + " here, " + TypeOf(*theirs) + " upstream");
    if (LabelOf(*theirs) != LabelOf(ours))
      Problem(where + ": " + LabelOf(ours) + " here, " + LabelOf(*theirs) + " upstream");
  }

  void CompareService(const pb::ServiceDescriptor& ours) {
    const pb::ServiceDescriptor* theirs = upstream_.FindServiceByName(ours.full_name());
    if (theirs == nullptr) return Problem("service " + ours.full_name() + ": absent upstream");
    for (int i = 0; i < ours.method_count(); ++i) {
      ++methods_;
      const pb::MethodDescriptor& method = *ours.method(i);
      const std::string where = "rpc " + method.full_name();
      const pb::MethodDescriptor* their_method = theirs->FindMethodByName(method.name());
      if (their_method == nullptr) {
        Problem(where + ": absent upstream");
        continue;
      }
      if (their_method->input_type()->full_name() != method.input_type()->full_name())
        Problem(where + ": request " + method.input_type()->full_name() + " here, " +
                their_method->input_type()->full_name() + " upstream");
      if (their_method->output_type()->full_name() != method.output_type()->full_name())
        Problem(where + ": response " + method.output_type()->full_name() + " here, " +
                their_method->output_type()->full_name() + " upstream");
      if (their_method->client_streaming() != method.client_streaming() ||
          their_method->server_streaming() != method.server_streaming())
        Problem(where + ": streaming differs from upstream");
    }
  }

  const pb::DescriptorPool& upstream_;
  std::vector<std::string> problems_;
  int messages_ = 0;
  int fields_ = 0;
  int enums_ = 0;
  int methods_ = 0;
};

int Check(const fs::path& ours_path, const fs::path& upstream_path) {
  if (!fs::exists(upstream_path)) {
    std::cout << "SKIP: upstream CRI api.proto not found at " << upstream_path.string()
              << "; run tests/runtime/runtime_env.sh fetch " << upstream_path.parent_path().string() << "\n";
    return kExitSkip;
  }
  ScratchDir scratch;
  // Separate folders, so protoc sees each file alone under its own name.
  const fs::path upstream_copy = scratch.path() / "upstream" / "api.proto";
  fs::create_directories(upstream_copy.parent_path());
  WriteFile(upstream_copy, WithoutGogoOptions(ReadFile(upstream_path), upstream_path));

  // Our file and upstream declare the same package, so each gets its own pool.
  pb::DescriptorPool ours_pool;
  pb::DescriptorPool upstream_pool;
  const pb::FileDescriptor* ours =
      BuildFile(CompileWithProtoc(ours_path, scratch.path() / "ours.pb"), ours_pool, ours_path);
  const pb::FileDescriptor* upstream = BuildFile(
      CompileWithProtoc(upstream_copy, scratch.path() / "upstream.pb"), upstream_pool, upstream_path);

  DriftReport report(upstream_pool);
  if (ours->package() != upstream->package())
    std::cout << "package " << ours->package() << " here, " << upstream->package() << " upstream\n";
  report.CompareFile(*ours);
  for (const std::string& problem : report.problems())
    std::cout << ours_path.string() << ": " << problem << "\n";
  if (!report.problems().empty() || ours->package() != upstream->package()) {
    std::cout << "FAIL: " << report.problems().size() << " difference(s) between " << ours_path.string()
              << " and upstream " << upstream_path.string() << "\n";
    return kExitDrift;
  }
  std::cout << "OK: " << report.Summary() << " of " << ours_path.string() << " match upstream "
            << upstream_path.string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <our cri.proto> <upstream api.proto>\n";
    return kExitFailure;
  }
  try {
    return Check(argv[1], argv[2]);
  } catch (const std::exception& error) {
    std::cerr << "cri_proto_check: " << error.what() << "\n";
    return kExitFailure;
  }
}
