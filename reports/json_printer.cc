#include "reports/json_printer.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/json_util.h>

#include <ostream>
#include <string>

#include "reports/strings.h"
#include "schema/report.pb.h"

namespace occ::reports {
namespace {

namespace pb = google::protobuf;

// Proto3 strings must be valid UTF-8 and the JSON writer refuses them otherwise; a trace's
// kernel names are bytes from the driver, so repair them rather than fail the whole report.
void RepairUtf8(pb::Message* message) {
  const pb::Reflection* reflection = message->GetReflection();
  const pb::Descriptor* descriptor = message->GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
      if (field->is_repeated()) {
        for (int k = 0; k < reflection->FieldSize(*message, field); ++k) {
          const std::string value = reflection->GetRepeatedString(*message, field, k);
          const std::string fixed = SanitizeUtf8(value);
          if (fixed != value) reflection->SetRepeatedString(message, field, k, fixed);
        }
      } else {
        const std::string value = reflection->GetString(*message, field);
        const std::string fixed = SanitizeUtf8(value);
        if (fixed != value) reflection->SetString(message, field, fixed);
      }
    } else if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      if (field->is_repeated()) {
        for (int k = 0; k < reflection->FieldSize(*message, field); ++k) {
          RepairUtf8(reflection->MutableRepeatedMessage(message, field, k));
        }
      } else if (reflection->HasField(*message, field)) {
        RepairUtf8(reflection->MutableMessage(message, field));
      }
    }
  }
}

}  // namespace

void JsonPrinter::DoPrint(const occtrace::Report& report, const PrintOptions&, std::ostream& out) {
  occtrace::Report clean = report;
  RepairUtf8(&clean);
  pb::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;  // the documented contract: names as in report.proto
  // Zeros are data here (0 launches dropped, 0% achieved): print every field so consumers never
  // have to know proto3's default-omission rule.
  options.always_print_primitive_fields = true;
  std::string json;
  const auto status = pb::util::MessageToJsonString(clean, &json, options);
  if (!status.ok()) {
    // Unreachable after RepairUtf8 (the only failure for a Report is invalid UTF-8); still
    // emit valid JSON naming the problem rather than nothing.
    std::string message(status.message());
    std::string escaped;
    for (const char c : SanitizeForDisplay(message)) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    out << "{\"error\": \"cannot convert the report to JSON: " << escaped << "\"}\n";
    return;
  }
  out << json;
  if (json.empty() || json.back() != '\n') out << '\n';
}

}  // namespace occ::reports
