"""C++ code from .proto files with Debian's protoc and grpc_cpp_plugin.

Bazel 4's proto rules would fetch protobuf's sources; recrawl builds offline,
so a genrule runs the installed `protoc` (and, for services, the installed
`grpc_cpp_plugin`) and a cc_library wraps what they write.
"""

def proto_cc_library(name, srcs, deps = [], grpc = False, visibility = None):
    """Generates C++ for `srcs` and compiles it into the cc_library `name`.

    Args:
      name: the cc_library. `<name>_protos` is a filegroup of `srcs` plus the
        .proto files of `deps`, so that protoc sees every imported file.
      srcs: .proto files of this package. Imports are written from the
        workspace root ("proto/common.proto").
      deps: other proto_cc_library targets whose files `srcs` import.
      grpc: also generate gRPC service stubs (*.grpc.pb.{h,cc}).
      visibility: of the cc_library and the filegroup.
    """
    native.filegroup(
        name = name + "_protos",
        srcs = srcs + [dep + "_protos" for dep in deps],
        visibility = visibility,
    )

    outs = []
    for src in srcs:
        if not src.endswith(".proto"):
            fail("proto_cc_library: %s is not a .proto file" % src)
        stem = src[:-len(".proto")]
        outs += [stem + ".pb.h", stem + ".pb.cc"]
        if grpc:
            outs += [stem + ".grpc.pb.h", stem + ".grpc.pb.cc"]

    # protoc writes "<package>/<file>.pb.h" under the output root, which is
    # where Bazel expects this package's outputs.
    cmd = "protoc -I. --cpp_out=$(GENDIR)"
    if grpc:
        cmd += (" --grpc_out=$(GENDIR)" +
                " --plugin=protoc-gen-grpc=$$(command -v grpc_cpp_plugin)")
    cmd += "".join([" $(location %s)" % src for src in srcs])

    native.genrule(
        name = name + "_gen",
        srcs = srcs + [":" + name + "_protos"],
        outs = outs,
        cmd = cmd,
        message = "protoc %s" % name,
    )

    runtime = ["//third_party:protobuf"]
    if grpc:
        runtime.append("//third_party:grpc++")
    native.cc_library(
        name = name,
        srcs = [out for out in outs if out.endswith(".cc")],
        hdrs = [out for out in outs if out.endswith(".h")],
        deps = deps + runtime,
        visibility = visibility,
    )
