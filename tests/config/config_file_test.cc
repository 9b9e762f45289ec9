#include "config/config_file.h"

#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "experiments/experiment.pb.h"
#include "models/model.pb.h"
#include "models/profile.pb.h"

namespace ppsim {
namespace {

using google::protobuf::util::MessageDifferencer;
using proto::Profile;
using proto::TransformerModel;

// Parses `text` as if read from `source` (whose extension gives the format).
Status Parse(std::string_view text, const std::string& source, google::protobuf::Message* message,
             ConfigLocations* locations = nullptr) {
  ConfigFormat format;
  const Status status = ConfigFormatOf(source, &format);
  EXPECT_TRUE(status.ok()) << status.message();
  return ParseConfig(text, format, source, message, locations);
}

// The message of a parse that must fail with InvalidInput.
template <class M>
std::string Errors(std::string_view text, const std::string& source) {
  M message;
  const Status status = Parse(text, source, &message);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput) << text;
  return status.message();
}

// The profile the three documents below describe, built field by field.
Profile TwoStages() {
  Profile profile;
  proto::StageProfile* first = profile.add_stages();
  first->set_f_s(0.001);
  first->set_b_s(0.002);
  first->set_activation_bytes(1048576);
  proto::StageProfile* second = profile.add_stages();
  second->set_f_s(0.0015);
  second->set_i_s(0);
  second->set_message_bytes(4096);
  return profile;
}

constexpr std::string_view kTextProfile = R"(# two stages
stages {
  f_s: 0.001
  b_s: 0.002
  activation_bytes: 1048576
}
stages { f_s: 0.0015 i_s: 0 message_bytes: 4096 }
)";

constexpr std::string_view kJsonProfile = R"({
  "stages": [
    {"f_s": 0.001, "b_s": 0.002, "activation_bytes": 1048576},
    {"fS": 0.0015, "iS": 0, "messageBytes": 4096}
  ]
}
)";

constexpr std::string_view kYamlProfile = R"(# two stages
stages:
  - f_s: 0.001
    b_s: 0.002
    activation_bytes: 1048576   # 1 MiB
  - {f_s: 0.0015, i_s: 0, message_bytes: 4096}
)";

TEST(ConfigFormatOf, KnowsEachExtension) {
  ConfigFormat format;
  for (const char* path : {"a.textproto", "dir.d/a.pbtxt", "a.txtpb", "A.TEXTPROTO"}) {
    ASSERT_TRUE(ConfigFormatOf(path, &format).ok()) << path;
    EXPECT_EQ(format, ConfigFormat::kTextProto) << path;
  }
  ASSERT_TRUE(ConfigFormatOf("profiles/p.json", &format).ok());
  EXPECT_EQ(format, ConfigFormat::kJson);
  for (const char* path : {"p.yaml", "p.yml"}) {
    ASSERT_TRUE(ConfigFormatOf(path, &format).ok()) << path;
    EXPECT_EQ(format, ConfigFormat::kYaml) << path;
  }
}

TEST(ConfigFormatOf, RejectsOtherExtensionsNamingTheValidOnes) {
  ConfigFormat format;
  for (const char* path : {"p.toml", "profile", "dir.yaml/profile"}) {
    const Status status = ConfigFormatOf(path, &format);
    EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
    EXPECT_EQ(status.message(), std::string(path) +
                                    ": unknown configuration format; use .textproto, .pbtxt, "
                                    ".txtpb, .json, .yaml or .yml");
  }
}

TEST(ConfigFile, EveryFormatGivesTheSameProfile) {
  const Profile expected = TwoStages();
  for (const auto& [text, source] :
       {std::pair{kTextProfile, "p.textproto"}, std::pair{kJsonProfile, "p.json"},
        std::pair{kYamlProfile, "p.yaml"}}) {
    Profile profile;
    const Status status = Parse(text, source, &profile);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(MessageDifferencer::Equals(profile, expected))
        << source << ": " << profile.ShortDebugString();
    EXPECT_TRUE(profile.stages(1).has_i_s()) << source << ": an explicit 0 is present";
    EXPECT_FALSE(profile.stages(1).has_b_s()) << source;
  }
}

TEST(ConfigFile, EveryFormatGivesTheSameModel) {
  TransformerModel expected;
  expected.set_name("llama-7b");
  expected.set_layers(32);
  expected.set_hidden(4096);
  expected.set_ffn_hidden(11008);
  expected.set_heads(32);
  expected.set_vocab(32000);
  expected.set_tied_embeddings(false);
  expected.set_mlp(TransformerModel::SWIGLU);
  expected.set_seq_len(4096);
  const std::string text = R"(name: "llama-7b" layers: 32 hidden: 4096 ffn_hidden: 11008
heads: 32 vocab: 32000 tied_embeddings: false mlp: SWIGLU seq_len: 4096)";
  const std::string json = R"({"name": "llama-7b", "layers": 32, "hidden": 4096,
  "ffnHidden": 11008, "heads": 32, "vocab": 32000, "tiedEmbeddings": false, "mlp": "SWIGLU",
  "seq_len": "4096"})";
  const std::string yaml = R"(name: llama-7b
layers: 32
hidden: 4096
ffn_hidden: 11008
heads: 32
vocab: 32000
tied_embeddings: false
mlp: SWIGLU
seq_len: 4096
)";
  for (const auto& [document, source] :
       {std::pair{text, "m.pbtxt"}, std::pair{json, "m.json"}, std::pair{yaml, "m.yml"}}) {
    TransformerModel model;
    const Status status = Parse(document, source, &model);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(MessageDifferencer::Equals(model, expected))
        << source << ": " << model.ShortDebugString();
  }
}

TEST(ConfigFile, LocationsPointAtEachValueInEveryFormat) {
  struct Case {
    std::string_view text;
    std::string source;
    std::map<std::string, std::string> where;
  };
  const Case cases[] = {
      {kTextProfile,
       "p.textproto",
       {{"stages", "p.textproto:2:8"},
        {"stages[0]", "p.textproto:2:8"},
        {"stages[0].f_s", "p.textproto:3:8"},
        {"stages[0].activation_bytes", "p.textproto:5:21"},
        {"stages[1]", "p.textproto:7:8"},
        {"stages[1].message_bytes", "p.textproto:7:44"}}},
      {kJsonProfile,
       "p.json",
       {{"stages", "p.json:2:13"},
        {"stages[0]", "p.json:3:5"},
        {"stages[0].f_s", "p.json:3:13"},
        {"stages[0].activation_bytes", "p.json:3:54"},
        {"stages[1]", "p.json:4:5"},
        {"stages[1].message_bytes", "p.json:4:45"}}},
      {kYamlProfile,
       "p.yaml",
       {{"stages", "p.yaml:3:3"},
        {"stages[0]", "p.yaml:3:5"},
        {"stages[0].f_s", "p.yaml:3:10"},
        {"stages[0].activation_bytes", "p.yaml:5:23"},
        {"stages[1]", "p.yaml:6:5"},
        {"stages[1].message_bytes", "p.yaml:6:42"}}},
  };
  for (const Case& c : cases) {
    Profile profile;
    ConfigLocations locations;
    const Status status = Parse(c.text, c.source, &profile, &locations);
    ASSERT_TRUE(status.ok()) << status.message();
    for (const auto& [path, where] : c.where) EXPECT_EQ(locations.Where(path), where) << path;
    EXPECT_EQ(locations.Where("stages[1].b_s"), c.source) << "not written";
    EXPECT_EQ(locations.Where("stages[2]"), c.source) << "no such stage";
  }
}

TEST(ConfigFile, LocationsMayBeNull) {
  Profile profile;
  EXPECT_TRUE(Parse(kYamlProfile, "p.yaml", &profile, nullptr).ok());
}

TEST(ConfigFile, ClearsTheMessageFirstAndOnFailure) {
  Profile profile = TwoStages();
  ASSERT_TRUE(Parse("stages: [{f_s: 5}]", "p.yaml", &profile).ok());
  ASSERT_EQ(profile.stages_size(), 1);
  EXPECT_FALSE(profile.stages(0).has_b_s());

  ConfigLocations locations;
  ASSERT_TRUE(Parse("stages: [{f_s: 5}]", "p.yaml", &profile, &locations).ok());
  EXPECT_FALSE(Parse("stages: [{f_s: 5}, {f_s: x}]", "p.yaml", &profile, &locations).ok());
  EXPECT_EQ(profile.stages_size(), 0);
  EXPECT_EQ(locations.Where("stages[0].f_s"), "p.yaml");
}

TEST(ConfigFile, UnknownFieldSuggestsTheClosestName) {
  EXPECT_EQ(Errors<Profile>("stages:\n  - f_s: 1\n  - f_ms: 2\n", "p.yaml"),
            "p.yaml:3:5: stages[1].f_ms: unknown field; did you mean f_s?");
  EXPECT_EQ(Errors<TransformerModel>(R"({"layer": 2})", "m.json"),
            "m.json:1:2: layer: unknown field; did you mean layers?");
  EXPECT_EQ(Errors<TransformerModel>(R"({"ffnHiden": 2})", "m.json"),
            "m.json:1:2: ffnHiden: unknown field; did you mean ffnHidden?");
}

TEST(ConfigFile, UnknownFieldFarFromAnyNameListsTheValidOnes) {
  EXPECT_EQ(Errors<TransformerModel>("depth: 2\n", "m.yaml"),
            "m.yaml:1:1: depth: unknown field; valid: name, layers, hidden, ffn_hidden, heads, "
            "kv_heads, vocab, tied_embeddings, mlp, seq_len, norm, head_dim, qkv_bias, "
            "qk_norm, mtp_layers, attention, q_lora_rank, "
            "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, experts, "
            "experts_per_token, shared_experts, expert_ffn_hidden, first_dense_layers, "
            "router_bias");
}

TEST(ConfigFile, UnknownEnumValueListsTheValidOnesAndSuggests) {
  EXPECT_EQ(Errors<TransformerModel>("{\n    \"mlp\": \"SWIGLUE\"\n}", "m.json"),
            "m.json:2:12: mlp: unknown value 'SWIGLUE'; valid: GELU, SWIGLU (did you mean "
            "SWIGLU?)");
  EXPECT_EQ(Errors<TransformerModel>("mlp: swiglu", "m.yaml"),
            "m.yaml:1:6: mlp: unknown value 'swiglu'; valid: GELU, SWIGLU (did you mean SWIGLU?)");
  EXPECT_EQ(Errors<TransformerModel>("mlp: tanh", "m.yaml"),
            "m.yaml:1:6: mlp: unknown value 'tanh'; valid: GELU, SWIGLU");
  EXPECT_EQ(Errors<TransformerModel>("mlp: 2", "m.yaml"),
            "m.yaml:1:6: mlp: unknown value '2'; valid: GELU, SWIGLU");
  EXPECT_EQ(Errors<TransformerModel>("mlp: [GELU]", "m.yaml"),
            "m.yaml:1:6: mlp: expected one of GELU, SWIGLU, got a list");
}

TEST(ConfigFile, ReportsEveryErrorOfTheFileOnePerLine) {
  const std::string yaml = R"(name: [a]
layers: 3.5
heads: 3000000000
vocab: -1e30
kv_heads: "8"
tied_embeddings: yes
mlp: SWIGLUE
ffn_hiden: 4
hidden: {a: 1}
)";
  EXPECT_EQ(Errors<TransformerModel>(yaml, "m.yaml"),
            "m.yaml:1:7: name: expected a string, got a list\n"
            "m.yaml:2:9: layers: expected an integer, got '3.5'\n"
            "m.yaml:3:8: heads: expected an integer in [-2147483648, 2147483647], got "
            "'3000000000'\n"
            "m.yaml:4:8: vocab: expected an integer in [-9223372036854775808, "
            "9223372036854775807], got '-1e30'\n"
            "m.yaml:6:18: tied_embeddings: expected true or false, got 'yes'\n"
            "m.yaml:7:6: mlp: unknown value 'SWIGLUE'; valid: GELU, SWIGLU (did you mean "
            "SWIGLU?)\n"
            "m.yaml:8:1: ffn_hiden: unknown field; did you mean ffn_hidden?\n"
            "m.yaml:9:9: hidden: expected an integer, got a map");
}

TEST(ConfigFile, ErrorsInsideListsNameTheElement) {
  const std::string json = R"({"stages": [
  {"f_s": 1},
  {"f_s": "fast", "activation_bytes": 1.5},
  3,
  null
]})";
  EXPECT_EQ(Errors<Profile>(json, "p.json"),
            "p.json:3:11: stages[1].f_s: expected a number, got 'fast'\n"
            "p.json:3:39: stages[1].activation_bytes: expected an integer, got '1.5'\n"
            "p.json:4:3: stages[2]: expected a map of fields, got '3'\n"
            "p.json:5:3: stages[3]: null is not allowed in a list");
  EXPECT_EQ(Errors<Profile>("stages: {f_s: 1}", "p.yaml"),
            "p.yaml:1:9: stages: expected a list, got a map");
  EXPECT_EQ(Errors<Profile>("stages: 1", "p.yaml"), "p.yaml:1:9: stages: expected a list, got '1'");
  EXPECT_EQ(Errors<Profile>("[1]", "p.yaml"), "p.yaml:1:1: expected a map of fields, got a list");
}

TEST(ConfigFile, IntegersMayBeWrittenAsWholeDecimalsButNotFractions) {
  Profile profile;
  const Status status = Parse(R"({"stages": [{"activation_bytes": 1e9, "param_bytes": 3.0,
      "grad_bytes": "12", "optimizer_bytes": -9223372036854775808, "message_bytes": 250e-1}]})",
                              "p.json", &profile);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(profile.stages(0).activation_bytes(), 1000000000);
  EXPECT_EQ(profile.stages(0).param_bytes(), 3);
  EXPECT_EQ(profile.stages(0).grad_bytes(), 12);
  EXPECT_EQ(profile.stages(0).optimizer_bytes(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(profile.stages(0).message_bytes(), 25);
  EXPECT_EQ(Errors<Profile>("stages: [{message_bytes: 9223372036854775808}]", "p.yaml"),
            "p.yaml:1:26: stages[0].message_bytes: expected an integer in "
            "[-9223372036854775808, 9223372036854775807], got '9223372036854775808'");
  EXPECT_EQ(Errors<Profile>("stages: [{message_bytes: 1e-3}]", "p.yaml"),
            "p.yaml:1:26: stages[0].message_bytes: expected an integer, got '1e-3'");
}

TEST(ConfigFile, NumbersTakeInfinityButNotOverflow) {
  Profile profile;
  ASSERT_TRUE(
      Parse("stages: [{f_s: .inf, i_s: -Infinity, w_s: +1.5e-3}]", "p.yaml", &profile).ok());
  EXPECT_EQ(profile.stages(0).f_s(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(profile.stages(0).i_s(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(profile.stages(0).w_s(), 0.0015);
  EXPECT_EQ(Errors<Profile>("stages: [{f_s: 1e999}]", "p.yaml"),
            "p.yaml:1:16: stages[0].f_s: '1e999' is out of range for a double");
  EXPECT_EQ(Errors<Profile>("stages: [{f_s: 0x10}]", "p.yaml"),
            "p.yaml:1:16: stages[0].f_s: expected a number, got '0x10'");
}

TEST(ConfigFile, NullLeavesAFieldUnset) {
  Profile profile;
  ASSERT_TRUE(Parse(R"({"stages": [{"f_s": null, "b_s": 2}]})", "p.json", &profile).ok());
  EXPECT_FALSE(profile.stages(0).has_f_s());
  ASSERT_TRUE(Parse("stages:\n- f_s: ~\n  i_s: null\n  w_s:\n  b_s: 2\n", "p.yaml", &profile).ok());
  EXPECT_FALSE(profile.stages(0).has_f_s());
  EXPECT_FALSE(profile.stages(0).has_i_s());
  EXPECT_FALSE(profile.stages(0).has_w_s());
  EXPECT_EQ(profile.stages(0).b_s(), 2);
  ASSERT_TRUE(Parse("stages: null", "p.yaml", &profile).ok());
  EXPECT_EQ(profile.stages_size(), 0);
  TransformerModel model;
  ASSERT_TRUE(Parse("name: 'null'", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "null");
}

TEST(ConfigFile, DuplicateKeysAreErrorsEvenUnderTheJsonName) {
  EXPECT_EQ(Errors<TransformerModel>("layers: 2\nhidden: 8\nlayers: 3\n", "m.yaml"),
            "m.yaml:3:1: layers: duplicate key; first at 1:1");
  EXPECT_EQ(Errors<TransformerModel>(R"({"ffn_hidden": 1, "ffnHidden": 2})", "m.json"),
            "m.json:1:19: ffn_hidden: duplicate key; first at 1:2");
  EXPECT_EQ(Errors<TransformerModel>("layers: ~\nlayers: 3\n", "m.yaml"),
            "m.yaml:2:1: layers: duplicate key; first at 1:1");
}

TEST(ConfigFile, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(Errors<TransformerModel>("{\"name\": \"é\", \"layers\": x}", "m.json"),
            "m.json:1:25: unexpected 'x'; strings must be in double quotes, and the literals are "
            "true, false and null");
  EXPECT_EQ(Errors<TransformerModel>("{name: Zoë, layers: x}", "m.yaml"),
            "m.yaml:1:21: layers: expected an integer, got 'x'");
  EXPECT_EQ(Errors<TransformerModel>("name: \"Zoë\" layers: x", "m.txtpb"),
            "m.txtpb:1:21: Expected integer, got: x");
}

TEST(ConfigFile, EchoedTextStaysOnOneLine) {
  EXPECT_EQ(Errors<TransformerModel>(R"({"layers": "a\nb", "x\ty": 1})", "m.json"),
            "m.json:1:12: layers: expected an integer, got 'a\\nb'\n"
            "m.json:1:20: x\\ty: unknown field; valid: name, layers, hidden, ffn_hidden, heads, "
            "kv_heads, vocab, tied_embeddings, mlp, seq_len, norm, head_dim, qkv_bias, "
            "qk_norm, mtp_layers, attention, q_lora_rank, "
            "kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, experts, "
            "experts_per_token, shared_experts, expert_ffn_hidden, first_dense_layers, "
            "router_bias");
  EXPECT_EQ(Errors<TransformerModel>("layers: " + std::string(100, '7') + "x", "m.yaml"),
            "m.yaml:1:9: layers: expected an integer, got '" + std::string(60, '7') +
                "...' (101 bytes)");
}

TEST(ConfigJson, AcceptsLowerCamelCaseAndProtoNames) {
  TransformerModel model;
  ASSERT_TRUE(
      Parse(R"({"kvHeads": 8, "kv_heads_": null, "tied_embeddings": true})", "m.json", &model)
          .code() == StatusCode::kInvalidInput);
  ASSERT_TRUE(
      Parse(R"({"kvHeads": 8, "tied_embeddings": true, "seqLen": 2048})", "m.json", &model).ok());
  EXPECT_EQ(model.kv_heads(), 8);
  EXPECT_TRUE(model.tied_embeddings());
  EXPECT_EQ(model.seq_len(), 2048);
}

TEST(ConfigJson, DecodesEscapes) {
  TransformerModel model;
  ASSERT_TRUE(Parse(R"({"name": "a\"b\\c\/d\n\u00e9\ud83d\ude00"})", "m.json", &model).ok());
  EXPECT_EQ(model.name(), "a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(ConfigJson, SyntaxErrorsAreLocated) {
  const std::pair<std::string, std::string> cases[] = {
      {"{\"layers\": 1,}", "m.json:1:14: expected a key in double quotes after ',', got '}'"},
      {"{'layers': 1}", "m.json:1:2: expected a key in double quotes, got '''"},
      {"{\"name\": 'x'}", "m.json:1:10: strings must be in double quotes"},
      {"{\"layers\" 1}", "m.json:1:11: expected ':' after the key, got '1'"},
      {"{\"layers\": 1 \"heads\": 2}", "m.json:1:14: expected ',' or '}', got '\"'"},
      {"{\"layers\": 01}", "m.json:1:12: invalid number '01'"},
      {"{\"name\": \"abc}", "m.json:1:10: unterminated string"},
      {"{\"name\": \"a\\qb\"}",
       "m.json:1:12: invalid escape '\\q'; valid: \\\" \\\\ \\/ \\b \\f "
       "\\n \\r \\t \\uXXXX"},
      {"{\"name\": \"\\ud800\"}", "m.json:1:11: unpaired surrogate in a \\u escape"},
      {"// c\n{}", "m.json:1:1: comments are not allowed in JSON"},
      {"{} {}", "m.json:1:4: unexpected '{' after the end of the document"},
      {"{\"layers\": [1, 2", "m.json:1:17: expected ',' or ']', got the end of the file"},
      {"", "m.json:1:1: expected a value, got the end of the file"},
  };
  for (const auto& [text, message] : cases)
    EXPECT_EQ(Errors<TransformerModel>(text, "m.json"), message);
}

TEST(ConfigJson, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_EQ(Errors<Profile>("{\"stages\": " + deep + "}", "p.json"),
            "p.json:1:111: nested deeper than 100 levels");
}

TEST(ConfigYaml, ListsOfMapsAtTheirKeysIndentationOrDeeper) {
  const std::string yaml = R"(stages:
- f_s: 1
  b_s: 2
-
  f_s: 3
- {}
)";
  Profile profile;
  ConfigLocations locations;
  const Status status = Parse(yaml, "p.yaml", &profile, &locations);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(profile.stages_size(), 3);
  EXPECT_EQ(profile.stages(0).b_s(), 2);
  EXPECT_EQ(profile.stages(1).f_s(), 3);
  EXPECT_FALSE(profile.stages(2).has_f_s());
  EXPECT_EQ(locations.Where("stages[0].b_s"), "p.yaml:3:8");
  EXPECT_EQ(locations.Where("stages[1].f_s"), "p.yaml:5:8");
}

TEST(ConfigYaml, FlowCollectionsMaySpanLines) {
  const std::string yaml = R"(stages: [
  {f_s: 1, i_s: 2},   # first
  {f_s: 3,
   w_s: 4},
]
)";
  Profile profile;
  ConfigLocations locations;
  const Status status = Parse(yaml, "p.yaml", &profile, &locations);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(profile.stages_size(), 2);
  EXPECT_EQ(profile.stages(1).w_s(), 4);
  EXPECT_EQ(locations.Where("stages[1].w_s"), "p.yaml:4:9");
}

TEST(ConfigYaml, CommentsAndQuotedStrings) {
  TransformerModel model;
  ASSERT_TRUE(Parse("name: 'it''s # not a comment'  # a comment\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "it's # not a comment");
  ASSERT_TRUE(Parse("name: \"tab\\there \\\"q\\\" \\u00e9\"\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "tab\there \"q\" \xC3\xA9");
  ASSERT_TRUE(Parse("name: gpt#2 # comment\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "gpt#2");
  ASSERT_TRUE(Parse("\"name\": x:y\n'layers': 2\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "x:y");
  EXPECT_EQ(model.layers(), 2);
  ASSERT_TRUE(Parse("---\n# only comments\n\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.ByteSizeLong(), 0u);
}

TEST(ConfigYaml, SyntaxErrorsAreYamlCppsOwnLocated) {
  const std::pair<std::string, std::string> cases[] = {
      {"layers: 2\n\thidden: 3\n", "m.yaml:2:1: illegal tab when looking for indentation"},
      {"layers: *n\n", "m.yaml:1:9: the referenced anchor is not defined"},
      {"layers: heads: 2\n", "m.yaml:1:14: illegal map value"},
      {"layers: - 2\n", "m.yaml:1:9: illegal block entry"},
      // yaml-cpp would take the rest of the file into the string; the reader makes it say so.
      {"name: 'abc\n", "m.yaml:2:1: illegal EOF in scalar"},
      {"name: 'abc\nlayers: 2\n", "m.yaml:3:1: illegal EOF in scalar"},
      {"name: \"a\" b\n", "m.yaml:1:11: end of map not found"},
      {"name: \"a\\q\"\n", "m.yaml:1:11: unknown escape character: q"},
      {"layers: 2\n- 3\n", "m.yaml:2:1: end of map not found"},
      {"layers: [1, 2\n", "m.yaml:2:1: end of sequence flow not found"},
      {"layers: [1]]\n", "m.yaml:1:12: illegal flow end"},
      {"layers: &a &b 2\n", "m.yaml:1:12: cannot assign multiple anchors to the same node"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(Errors<TransformerModel>(text, "m.yaml"), message) << text;
  }
}

TEST(ConfigYaml, WhatYamlReadsAsValuesIsCheckedAgainstTheFields) {
  const std::pair<std::string, std::string> cases[] = {
      // A flow map's key runs to the ':' ("a 1", with no value).
      {"layers: {a 1}\n", "m.yaml:1:9: layers: expected an integer, got a map"},
      // A "key: value" inside [ ] is a one-entry map.
      {"layers: [a: 1]\n", "m.yaml:1:9: layers: expected an integer, got a list"},
      // yaml-cpp reads an empty entry as null.
      {"layers: [1,,2]\n", "m.yaml:1:9: layers: expected an integer, got a list"},
      {"? [layers]\n: 2\n", "m.yaml:1:3: expected a name as the key, got a list"},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(Errors<TransformerModel>(text, "m.yaml"), message) << text;
  }
}

TEST(ConfigYaml, AnchorsAndAliasesRepeatAValue) {
  const std::string yaml = R"(name: aliases
base: {schedule: 1F1B, pp: 4}
axes:
  - &base
    field: microbatches
    values: &counts ["8", "16"]
  - field: microbatch_size
    values: *counts
    with: [*base]
)";
  proto::Experiment experiment;
  ConfigLocations locations;
  const Status status = Parse(yaml, "e.yaml", &experiment, &locations);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(experiment.axes_size(), 2);
  EXPECT_EQ(experiment.axes(1).values_size(), 2);
  EXPECT_EQ(experiment.axes(1).values(1), "16");
  ASSERT_EQ(experiment.axes(1).with_size(), 1);
  EXPECT_TRUE(MessageDifferencer::Equals(experiment.axes(1).with(0), experiment.axes(0)));
  // An alias's values are located where its anchor wrote them.
  EXPECT_EQ(locations.Where("axes[1].with[0].field"), "e.yaml:5:12");
  EXPECT_EQ(locations.Where("axes[1].values[1]"), "e.yaml:6:27");
  EXPECT_EQ(locations.Where("axes[1].field"), "e.yaml:7:12");
  // Problems inside an aliased value are reported for each use, at the anchor's text.
  EXPECT_EQ(Errors<Profile>("stages:\n  - &s {f_s: x}\n  - *s\n", "p.yaml"),
            "p.yaml:2:14: stages[0].f_s: expected a number, got 'x'\n"
            "p.yaml:2:14: stages[1].f_s: expected a number, got 'x'");
}

TEST(ConfigYaml, MergeKeysAreNotSupportedByYamlCpp07) {
  const std::string yaml = R"(stages:
  - &base {f_s: 1, b_s: 2}
  - <<: *base
    b_s: 3
)";
  EXPECT_EQ(Errors<Profile>(yaml, "p.yaml"),
            "p.yaml:3:5: merge keys (<<) are not supported; alias the whole value (key: *name) "
            "or write its fields out");
  // A quoted "<<" is an ordinary key.
  EXPECT_EQ(Errors<Profile>("'<<': 1\n", "p.yaml"), "p.yaml:1:1: <<: unknown field; valid: stages");
}

TEST(ConfigYaml, BlockScalarsKeepTheirLines) {
  const std::string yaml = R"(name: blocks
description: |
  First line,
    indented line.
axes:
  - field: schedule
    values:
      - >
        folded
        into one line
)";
  proto::Experiment experiment;
  ConfigLocations locations;
  const Status status = Parse(yaml, "e.yaml", &experiment, &locations);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(experiment.description(), "First line,\n  indented line.\n");
  EXPECT_EQ(experiment.axes(0).values(0), "folded into one line\n");
  EXPECT_EQ(locations.Where("description"), "e.yaml:2:14");
}

TEST(ConfigYaml, ReadsTheRestOfYaml) {
  TransformerModel model;
  // Tags are ignored: the field decides how a scalar is read.
  ASSERT_TRUE(Parse("layers: !!int 2\nname: !!str 3\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.layers(), 2);
  EXPECT_EQ(model.name(), "3");
  ASSERT_TRUE(Parse("? layers\n: 2\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.layers(), 2);
  ASSERT_TRUE(Parse("%YAML 1.2\n---\nlayers: 3\n...\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.layers(), 3);
  ASSERT_TRUE(Parse("name: a\n  b\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "a b");
  ASSERT_TRUE(Parse("name: \"two\n  lines\"\n", "m.yaml", &model).ok());
  EXPECT_EQ(model.name(), "two lines");
  ASSERT_TRUE(Parse("", "m.yaml", &model).ok());
  EXPECT_EQ(model.ByteSizeLong(), 0u);
}

TEST(ConfigYaml, ASecondDocumentIsAnErrorWhereItStarts) {
  EXPECT_EQ(Errors<TransformerModel>("layers: 2\n---\nlayers: 3\n", "m.yaml"),
            "m.yaml:2:1: a second document; a configuration file holds one");
  EXPECT_EQ(Errors<TransformerModel>("---\nlayers: 2\n---\nlayers: 3\n", "m.yaml"),
            "m.yaml:3:1: a second document; a configuration file holds one");
  // The second document is reported first, where it starts, whatever follows it.
  EXPECT_EQ(Errors<TransformerModel>("layers: 2\n---\nlayers: [\n", "m.yaml"),
            "m.yaml:2:1: a second document; a configuration file holds one");
  EXPECT_EQ(Errors<TransformerModel>(",A", "m.yaml"),
            "m.yaml:1:1: a second document; a configuration file holds one");
  // yaml-cpp ends the first document where a line is less indented than its start.
  EXPECT_EQ(Errors<TransformerModel>("  layers: 2\nheads: 3\n", "m.yaml"),
            "m.yaml:2:1: a second document; a configuration file holds one");
}

TEST(ConfigYaml, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "stages:\n";
  for (int i = 0; i < 200; ++i) deep += std::string(2 * i, ' ') + "-\n";
  EXPECT_EQ(Errors<Profile>(deep, "p.yaml"), "p.yaml:101:199: nested deeper than 100 levels");
  // Left open, each '[' but the last is read by yaml-cpp as the key of a map inside the list
  // before it: two levels each.
  EXPECT_EQ(Errors<Profile>("stages: " + std::string(1000, '['), "p.yaml"),
            "p.yaml:1:59: nested deeper than 100 levels");
  EXPECT_EQ(Errors<Profile>("stages: " + std::string(150, '[') + std::string(150, ']'), "p.yaml"),
            "p.yaml:1:108: nested deeper than 100 levels");
  // An alias inside the value it names never ends.
  EXPECT_EQ(Errors<Profile>("stages: &s [*s]\n", "p.yaml"),
            "p.yaml:1:9: nested deeper than 100 levels");
}

TEST(ConfigYaml, FiftyThousandLevelsAreOneLocatedLine) {
  // Past 500 levels yaml-cpp stops with "bad file" located wherever its scanner had read to; the
  // reader names the 100th level instead.
  constexpr int kLevels = 50000;
  EXPECT_EQ(
      Errors<Profile>("stages: " + std::string(kLevels, '[') + std::string(kLevels, ']'), "p.yaml"),
      "p.yaml:1:108: nested deeper than 100 levels");
  std::string compact = "stages:\n";
  for (int i = 0; i < kLevels; ++i) compact += "- ";
  EXPECT_EQ(Errors<Profile>(compact + "x\n", "p.yaml"),
            "p.yaml:2:199: nested deeper than 100 levels");
  EXPECT_EQ(Errors<Profile>("stages: " + std::string(kLevels, '{'), "p.yaml"),
            "p.yaml:1:108: nested deeper than 100 levels");
}

TEST(ConfigYaml, AliasesMayNotExpandPastAMillionValues) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char name = 'b'; name <= 'g'; ++name) {
    const std::string previous = "*" + std::string(1, name - 1);
    yaml += std::string(1, name) + ": &" + std::string(1, name) + " [" + previous;
    for (int i = 1; i < 10; ++i) yaml += ", " + previous;
    yaml += "]\n";
  }
  EXPECT_EQ(Errors<Profile>(yaml, "p.yaml"),
            "p.yaml:1:1: more than 1000000 values once aliases are expanded");
}

TEST(ConfigTextProto, ReportsEveryUnknownFieldBeforeTheFirstSyntaxError) {
  EXPECT_EQ(
      Errors<Profile>("stages { f_s: 1 }\nstages { f_ms: 2 }\nstagez { f_s: 3 }\n", "p.textproto"),
      "p.textproto:2:10: stages[1].f_ms: unknown field; did you mean f_s?\n"
      "p.textproto:3:1: stagez: unknown field; did you mean stages?");
  // A message the parse left open has no recorded extent: protobuf's warning is passed on.
  EXPECT_EQ(Errors<Profile>("stages { f_ms: 2 f_s: x }", "p.textproto"),
            "p.textproto:1:14: Message type \"ppsim.proto.StageProfile\" has no field named "
            "\"f_ms\".\n"
            "p.textproto:1:23: Expected double, got: x");
  EXPECT_EQ(Errors<Profile>("stages { f_ms: 2 }\nstages { f_s: x }", "p.textproto"),
            "p.textproto:1:10: stages[0].f_ms: unknown field; did you mean f_s?\n"
            "p.textproto:2:15: Expected double, got: x");
  EXPECT_EQ(Errors<Profile>("stages: [{f_s: 1}, {f_ms: 2}]\nstages < i_z: 3 >", "p.textproto"),
            "p.textproto:1:21: stages[1].f_ms: unknown field; did you mean f_s?\n"
            "p.textproto:2:10: stages[2].i_z: unknown field; did you mean i_s?");
  EXPECT_EQ(Errors<Profile>("[ppsim.ext]: 1 stages {}", "p.textproto"),
            "p.textproto:1:12: Ignoring extension \"ppsim.ext\" which is not defined or is not an "
            "extension of \"ppsim.proto.Profile\".");
}

TEST(ConfigTextProto, ValueErrorsAreProtobufsAndNumbersMustNameAnEnumValue) {
  // protobuf's words, where protobuf reports them (for enums and bools, after the value).
  const std::pair<std::string, std::string> cases[] = {
      {"layers: 3.5", "m.textproto:1:9: Expected integer, got: 3.5"},
      {"layers: -3000000000", "m.textproto:1:10: Integer out of range (3000000000)"},
      {"name: 3", "m.textproto:1:7: Expected string, got: 3"},
      {"tied_embeddings: yes",
       "m.textproto:1:21: Invalid value for boolean field \"tied_embeddings\". Value: \"yes\"."},
      {"mlp: SWIGLUE\nlayers: 2",
       "m.textproto:2:1: Unknown enumeration value of \"SWIGLUE\" for field \"mlp\"."},
      {"mlp: \"GELU\"", "m.textproto:1:6: Expected integer or identifier, got: \"GELU\""},
      {"mlp: 7", "m.textproto:1:6: mlp: unknown value '7'; valid: GELU, SWIGLU"},
      {"mlp: -1", "m.textproto:1:6: mlp: unknown value '-1'; valid: GELU, SWIGLU"},
      {"\tlayers:\t3.5", "m.textproto:1:10: Expected integer, got: 3.5"},
      {"name: \"a\\q\"", "m.textproto:1:10: Invalid escape sequence in string literal."},
  };
  for (const auto& [text, message] : cases) {
    EXPECT_EQ(Errors<TransformerModel>(text, "m.textproto"), message) << text;
  }
  EXPECT_EQ(Errors<Profile>("stages: [{f_s: 1}, {f_s: \"a\"}]", "p.textproto"),
            "p.textproto:1:26: Expected double, got: \"a\"");
}

TEST(ConfigTextProto, DuplicateFieldIsAnErrorEvenWhenFirstSetToZero) {
  EXPECT_EQ(Errors<TransformerModel>("layers: 0\nlayers: 4", "m.textproto"),
            "m.textproto:2:1: layers: duplicate key; first at 1:1");
  EXPECT_EQ(Errors<TransformerModel>("layers: 0\nname: \"\"\nname: \"x\" layers: 0", "m.textproto"),
            "m.textproto:3:1: name: duplicate key; first at 2:1\n"
            "m.textproto:3:11: layers: duplicate key; first at 1:1");
  // Reported once, though its recorded place (the first value) is not its value (the last).
  EXPECT_EQ(Errors<TransformerModel>("mlp: 0\nmlp: 7", "m.textproto"),
            "m.textproto:2:1: mlp: duplicate key; first at 1:1");
  // Otherwise protobuf sees it.
  EXPECT_EQ(Errors<TransformerModel>("layers: 2\nlayers: 4", "m.textproto"),
            "m.textproto:2:7: Non-repeated field \"layers\" is specified multiple times.");
  EXPECT_EQ(Errors<Profile>("stages { f_s: 1 f_s: 2 }", "p.textproto"),
            "p.textproto:1:20: Non-repeated field \"f_s\" is specified multiple times.");
}

TEST(ConfigTextProto, SyntaxErrorsKeepTheParsersWords) {
  EXPECT_EQ(Errors<Profile>("stages { f_s: 1 ", "p.textproto"),
            "p.textproto:1:17: Expected identifier, got: ");
  EXPECT_EQ(Errors<Profile>("stages f_s: 1 }", "p.textproto"),
            "p.textproto:1:8: Expected \"{\", found \"f_s\".");
}

TEST(ConfigTextProto, NestingDeeperThanTheLimitIsOneLocatedLine) {
  // DescriptorProto nests itself (nested_type), like no ppsim message does.
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "nested_type { ";
  for (int i = 0; i < 50000; ++i) deep += "} ";
  google::protobuf::DescriptorProto message;
  const Status status = Parse(deep, "d.textproto", &message);
  EXPECT_EQ(status.message(),
            "d.textproto:1:1413: Message is too deep, the parser exceeded the configured "
            "recursion limit of 100.");
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += "nested_type { ";
  for (int i = 0; i < 100; ++i) hundred += "} ";
  EXPECT_TRUE(Parse(hundred, "d.textproto", &message).ok());
}

TEST(ConfigTextProto, LocationsAreAtTheValues) {
  const std::string text = R"(stages < f_s: -1.5; i_s:- 2, >
stages: { message_bytes: 4 }
stages: [{w_s: 1}]
)";
  Profile profile;
  ConfigLocations locations;
  ASSERT_TRUE(Parse(text, "p.txtpb", &profile, &locations).ok());
  EXPECT_EQ(profile.stages(0).i_s(), -2);
  EXPECT_EQ(locations.Where("stages"), "p.txtpb:1:8");
  EXPECT_EQ(locations.Where("stages[0].f_s"), "p.txtpb:1:15");
  EXPECT_EQ(locations.Where("stages[0].i_s"), "p.txtpb:1:25");
  EXPECT_EQ(locations.Where("stages[1]"), "p.txtpb:2:9");
  EXPECT_EQ(locations.Where("stages[1].message_bytes"), "p.txtpb:2:26");
  EXPECT_EQ(locations.Where("stages[2]"), "p.txtpb:3:10");
  EXPECT_EQ(locations.Where("stages[2].w_s"), "p.txtpb:3:16");
  TransformerModel model;
  ASSERT_TRUE(Parse("name: \"a\" 'b'\nmlp: 2", "m.txtpb", &model, &locations).ok());
  EXPECT_EQ(model.name(), "ab");
  EXPECT_EQ(locations.Where("name"), "m.txtpb:1:7");
  EXPECT_EQ(locations.Where("mlp"), "m.txtpb:2:6");
}

TEST(ConfigTextProto, ListSyntaxLocatesEachElement) {
  Profile profile;
  ConfigLocations locations;
  ASSERT_TRUE(
      Parse("stages: [{f_s: 1}, {f_s: 2}, {i_s: 4}]", "p.pbtxt", &profile, &locations).ok());
  EXPECT_EQ(locations.Where("stages"), "p.pbtxt:1:9");
  EXPECT_EQ(locations.Where("stages[1]"), "p.pbtxt:1:20");
  EXPECT_EQ(locations.Where("stages[2].i_s"), "p.pbtxt:1:36");
}

TEST(ConfigValues, CommandLinesTakeTheFilesRulesButOnlyFiniteNumbers) {
  proto::RunConfig config;
  ASSERT_TRUE(SetFieldFromText("pp", "1e1", "--set pp", &config).ok());
  EXPECT_EQ(config.pp(), 10);
  ASSERT_TRUE(SetFieldFromText("fail_on_oom", "True", "--set fail_on_oom", &config).ok());
  EXPECT_TRUE(config.fail_on_oom());
  ASSERT_TRUE(SetFieldFromText("set", "a=1", "--set set", &config).ok());
  ASSERT_TRUE(SetFieldFromText("set", "b=2", "--set set", &config).ok());
  EXPECT_EQ(config.set_size(), 2);
  const std::pair<std::pair<std::string, std::string>, std::string> cases[] = {
      {{"pp", "two"}, "--set pp: expected an integer, got 'two'"},
      {{"pp", "3.5"}, "--set pp: expected an integer, got '3.5'"},
      {{"pp", "3000000000"},
       "--set pp: expected an integer in [-2147483648, 2147483647], got '3000000000'"},
      {{"efficiency", "x"}, "--set efficiency: expected a number, got 'x'"},
      {{"efficiency", "-inf"}, "--set efficiency: expected a finite number, got '-inf'"},
      {{"efficiency", "1e999"}, "--set efficiency: '1e999' is out of range for a double"},
      {{"fail_on_oom", "yes"}, "--set fail_on_oom: expected true or false, got 'yes'"},
  };
  for (const auto& [assignment, message] : cases) {
    const auto& [path, value] = assignment;
    EXPECT_EQ(SetFieldFromText(path, value, "--set " + path, &config).message(), message);
  }
  TransformerModel model;
  EXPECT_EQ(SetFieldFromText("mlp", "swiglu", "--set mlp", &model).message(),
            "--set mlp: unknown value 'swiglu'; valid: GELU, SWIGLU (did you mean SWIGLU?)");
  EXPECT_EQ(SetFieldFromText("layer", "2", "--set layer", &model).message(),
            "--set layer: unknown key; valid: name, layers, hidden, ffn_hidden, heads, kv_heads, "
            "vocab, tied_embeddings, mlp, seq_len, norm, head_dim, qkv_bias, "
            "qk_norm, mtp_layers, attention, q_lora_rank, kv_lora_rank, "
            "qk_nope_head_dim, qk_rope_head_dim, v_head_dim, experts, experts_per_token, "
            "shared_experts, expert_ffn_hidden, first_dense_layers, router_bias (did you mean "
            "layers?)");
}

TEST(ConfigReadFile, ReadsTheFileByItsExtension) {
  const std::string path = testing::TempDir() + "config_file_test_profile.yaml";
  {
    std::ofstream out(path);
    out << kYamlProfile;
  }
  Profile profile;
  ConfigLocations locations;
  const Status status = ReadConfigFile(path, &profile, &locations);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(MessageDifferencer::Equals(profile, TwoStages()));
  EXPECT_EQ(locations.Where("stages[0].f_s"), path + ":3:10");
  std::remove(path.c_str());
}

TEST(ConfigReadFile, NamesTheFileAndTheReason) {
  Profile profile;
  const std::string missing = testing::TempDir() + "config_file_test_missing.json";
  Status status = ReadConfigFile(missing, &profile, nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(status.message(), missing + ": cannot read: No such file or directory");
  status = ReadConfigFile(testing::TempDir() + "x.ini", &profile, nullptr);
  EXPECT_EQ(status.message(), testing::TempDir() +
                                  "x.ini: unknown configuration format; use .textproto, .pbtxt, "
                                  ".txtpb, .json, .yaml or .yml");
}

}  // namespace
}  // namespace ppsim
