// Tensor maps and clusters through resolve_arguments / resolve_launch, the
// worker protocol, and the host-side arguments.
#include <gtest/gtest.h>

#include "evaluator/detail/host_arguments.hpp"
#include "evaluator/detail/protocol.hpp"
#include "evaluator/detail/worker.hpp"
#include "tunekit/error.hpp"
#include "tunekit/evaluator.hpp"

using namespace tunekit;
using namespace tunekit::detail;

namespace {

ArgumentSpec buffer(const char* name, ElementType t, const char* size, Role role = Role::in) {
  ArgumentSpec a;
  a.name = name;
  a.type = t;
  a.role = role;
  a.size = Expression::parse(size);
  return a;
}

ArgumentSpec tensor_map(const char* name, const char* of, std::vector<const char*> dims, std::vector<const char*> box) {
  ArgumentSpec a;
  a.name = name;
  a.role = Role::tensor_map;
  TensorMapSpec t;
  t.of = of;
  for (const char* d : dims) t.dims.push_back(Expression::parse(d));
  for (const char* b : box) t.box.push_back(Expression::parse(b));
  t.swizzle = 128;
  a.tensor_map = t;
  return a;
}

}  // namespace

TEST(HopperResolve, TensorMapExtentsFromSizesAndParameters) {
  auto r = resolve_arguments({buffer("A", ElementType::bf16, "M*K"), tensor_map("ta", "A", {"K", "M"}, {"BK", "BM"})},
                             {{"M", 100}, {"K", 64}, {"BK", 64}, {"BM", 128}});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].role, Role::tensor_map);
  EXPECT_EQ(r[1].type, ElementType::bf16);  // the buffer's
  EXPECT_EQ(r[1].count, 0u);
  ASSERT_TRUE(r[1].tensor_map);
  EXPECT_EQ(r[1].tensor_map->of, "A");
  EXPECT_EQ(r[1].tensor_map->dims, (std::vector<std::int64_t>{64, 100}));
  EXPECT_EQ(r[1].tensor_map->box, (std::vector<std::int64_t>{64, 128}));
  EXPECT_EQ(r[1].tensor_map->swizzle, 128);
}

TEST(HopperResolve, TensorMapOfAScalarIsAnInputError) {
  ArgumentSpec n;
  n.name = "n";
  n.role = Role::scalar;
  n.type = ElementType::i32;
  n.value = Expression::parse("4");
  EXPECT_THROW(resolve_arguments({n, tensor_map("t", "n", {"8"}, {"8"})}, {}), InputError);
  EXPECT_THROW(resolve_arguments({tensor_map("t", "nothing", {"8"}, {"8"})}, {}), InputError);
}

TEST(HopperResolve, ClusterFromParameters) {
  LaunchSpec l;
  l.grid = {Expression::parse("8"), Expression::parse("4")};
  l.block = {Expression::parse("128")};
  LaunchGeometry plain = resolve_launch(l, {});
  EXPECT_EQ(plain.cluster, (std::array<std::uint64_t, 3>{1, 1, 1}));
  EXPECT_FALSE(plain.clustered());
  l.cluster = {Expression::parse("CX"), Expression::parse("2")};
  LaunchGeometry g = resolve_launch(l, {{"CX", 4}});
  EXPECT_EQ(g.cluster, (std::array<std::uint64_t, 3>{4, 2, 1}));
  EXPECT_TRUE(g.clustered());
  EXPECT_THROW(resolve_launch(l, {{"CX", 0}}), InputError);
}

TEST(HopperProtocol, TensorMapArgumentRoundTrips) {
  ResolvedArgument a;
  a.name = "tmap";
  a.type = ElementType::f16;
  a.role = Role::tensor_map;
  a.tensor_map = ResolvedTensorMap{"A", {256, 100, 3}, {64, 32, 1}, 64, true, 256};
  const ResolvedArgument b = argument_from_json(to_json(a));
  EXPECT_EQ(b.name, "tmap");
  EXPECT_EQ(b.type, ElementType::f16);
  EXPECT_EQ(b.role, Role::tensor_map);
  ASSERT_TRUE(b.tensor_map);
  EXPECT_EQ(*b.tensor_map, *a.tensor_map);
  // Other arguments carry none.
  ResolvedArgument buf{"A", ElementType::f32, Role::in, 10, Fill::random, 0, {}, {}};
  EXPECT_FALSE(to_json(buf).contains("tensor_map"));
  EXPECT_FALSE(argument_from_json(to_json(buf)).tensor_map);
}

TEST(HopperProtocol, ClusterRoundTripsAndIsLeftOutWhenTrivial) {
  WorkerRequest r;
  r.launch.grid = {8, 4, 1};
  r.launch.block = {128, 1, 1};
  EXPECT_FALSE(to_json(r).contains("cluster"));  // request keys (reference caches) stay as before
  EXPECT_EQ(request_from_json(to_json(r)).launch.cluster, (std::array<std::uint64_t, 3>{1, 1, 1}));
  r.launch.cluster = {2, 2, 1};
  const WorkerRequest back = request_from_json(to_json(r));
  EXPECT_EQ(back.launch.cluster, (std::array<std::uint64_t, 3>{2, 2, 1}));
  EXPECT_EQ(back.launch.grid, r.launch.grid);
}

TEST(HopperHostArguments, TensorMapsAreNeitherBuffersNorScalarsAndDoNotRegenerateData) {
  std::vector<ResolvedArgument> args{{"A", ElementType::f32, Role::in, 64, Fill::random, 0, {}, {}},
                                     {"t", ElementType::f32, Role::tensor_map, 0, Fill::random, 0, {}, {}},
                                     {"n", ElementType::i32, Role::scalar, 0, Fill::zeros, 0, Value(64), {}}};
  args[1].tensor_map = ResolvedTensorMap{"A", {64}, {16}, 0, false, 128};
  HostArguments host;
  EXPECT_TRUE(host.prepare(args, 1));
  EXPECT_TRUE(host.is_buffer(0));
  EXPECT_FALSE(host.is_buffer(1));
  EXPECT_TRUE(host.is_tensor_map(1));
  EXPECT_FALSE(host.is_output(1));
  EXPECT_EQ(host.bytes(1), 0u);
  EXPECT_FALSE(host.is_buffer(2));
  // Another box (another config): same buffers, the new map kept.
  args[1].tensor_map->box = {32};
  EXPECT_FALSE(host.prepare(args, 1));
  EXPECT_EQ(host.argument(1).tensor_map->box, (std::vector<std::int64_t>{32}));
  EXPECT_EQ(argument_signature(args, 1), argument_signature({args[0], args[1], args[2]}, 1));
  args[1].tensor_map->box = {16};
  const std::string before = argument_signature(args, 1);
  args[1].tensor_map->dims = {32};
  EXPECT_EQ(argument_signature(args, 1), before);
  args[0].count = 65;
  EXPECT_NE(argument_signature(args, 1), before);
}

TEST(HopperHostArguments, OtherBackendsRefuseTensorMapsAndClusters) {
  WorkerRequest r;
  r.arguments = {{"A", ElementType::f32, Role::in, 64, Fill::random, 0, {}, {}}};
  EXPECT_FALSE(cuda_only_feature(r, "cpu"));
  r.launch.cluster = {2, 1, 1};
  auto why = cuda_only_feature(r, "opencl");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("cluster"), std::string::npos) << *why;
  r.launch.cluster = {1, 1, 1};
  r.arguments.push_back({"t", ElementType::f32, Role::tensor_map, 0, Fill::random, 0, {}, {}});
  why = cuda_only_feature(r, "cpu");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("tensor map"), std::string::npos) << *why;
}
