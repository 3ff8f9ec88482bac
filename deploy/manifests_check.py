#!/usr/bin/env python3
"""Checks what deploy/k8s and deploy/Dockerfile promise (deploy/manifests_test.sh).

  manifests_check.py manifests --help shard=FILE --help coordinator=FILE --help ingest=FILE
      RENDERED.yaml...
  manifests_check.py tokens TOKEN_FILE
  manifests_check.py dockerfile DOCKERFILE REPO_ROOT BINARY...

manifests: in each rendered kustomization, every --flag a container passes
exists in its binary's --helpfull; every $(VAR) in the args is defined; the
ConfigMaps' one NUM_SHARDS equals the StatefulSet's replicas and both
servers take --num_shards from it; the coordinator's
--shards_dns names the shards' headless Service and its port; probes,
Prometheus annotations and --metrics_port name the container's ports (the
gateway's --port is its HTTP port, which serves /metrics too); the
gateway's --coordinator names the coordinator's Service and gRPC port, its
--websub_callback_base is one ConfigMap's $(VAR) holding an https URL ending
in /websub; the
PodDisruptionBudget and the Services select the pods; the Secrets,
ConfigMaps and PersistentVolumeClaims the pods mount exist; one coordinator
and one gateway at a time.

tokens: the token file make_secrets.sh wrote has the services/auth.h format.

dockerfile: the files it COPYs from the context exist; the runtime stage's
packages exist in Debian (apt-cache show) and hold every shared library the
binaries load (objdump -p, ldd, dpkg -S).

Prints one line per problem and exits 1 if there was any.
"""

import os
import re
import shutil
import subprocess
import sys

import yaml

# Which binary a container runs, by container name.
BINARY_OF_CONTAINER = {"shard": "shard", "coordinator": "coordinator", "ingest": "ingest"}
# The servers whose one port is HTTP (named http), metrics included.
HTTP_SERVERS = {"ingest"}
# In debian:12-slim already (Priority: required).
BASE_IMAGE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}
# Sanitizer runtimes (tools/test_all.sh --config=asan builds the binaries
# with them); never in the -c opt image.
SANITIZER_LIB = re.compile(r"^lib(asan|ubsan|lsan|tsan)\.so")
# The dynamic loader: a binary with thread-local storage in position-
# independent code names it (__tls_get_addr); it is libc6's, in every image.
LOADER_LIB = re.compile(r"^ld-linux(-x86-64)?\.so\.\d+$")

problems = []


def problem(message):
    problems.append(message)
    print("FAIL: " + message)


def helped_flags(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return set(re.findall(r"^\s+--([A-Za-z0-9_]+)\b", f.read(), re.M))


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def check_container(where, container, pod, docs_by_kind, help_flags):
    binary = BINARY_OF_CONTAINER.get(container["name"])
    if binary is None:
        problem(f"{where}: container {container['name']}: no binary known for it")
        return {}
    words = list(container.get("command", [])[1:]) + list(container.get("args", []))
    flags = {}
    for word in words:
        m = re.match(r"^--([^=]+)(?:=(.*))?$", word)
        if not m:
            continue
        flags[m.group(1)] = m.group(2)
        if m.group(1) not in help_flags[binary]:
            problem(f"{where}: container {container['name']} passes --{m.group(1)}, "
                    f"which {binary} --helpfull does not list")

    defined = {e["name"] for e in container.get("env", [])}
    for source in container.get("envFrom", []):
        name = source.get("configMapRef", {}).get("name")
        if name is None:
            continue
        config = docs_by_kind.get(("ConfigMap", name))
        if config is None:
            problem(f"{where}: envFrom ConfigMap {name} is not in the manifests")
        else:
            defined |= set(config.get("data", {}))
    for word in words:
        for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", word):
            if var not in defined:
                problem(f"{where}: {word} uses $({var}), which no env or ConfigMap defines")

    ports = {p["containerPort"]: p.get("name") for p in container.get("ports", [])}
    for probe_name in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container.get(probe_name)
        if probe is None:
            if probe_name != "startupProbe":
                problem(f"{where}: container {container['name']} has no {probe_name}")
            continue
        for kind in ("grpc", "tcpSocket", "httpGet"):
            if kind in probe and probe[kind]["port"] not in ports:
                problem(f"{where}: {probe_name} probes port {probe[kind]['port']}, "
                        f"not a container port {sorted(ports)}")
    port_name = "http" if binary in HTTP_SERVERS else "grpc"
    port = flags.get("port")
    if port is None or int(port) not in ports or ports[int(port)] != port_name:
        problem(f"{where}: --port={port} is not the container port named {port_name}")
    annotations = pod["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/scrape") != "true":
        problem(f"{where}: no prometheus.io/scrape annotation")
    if binary in HTTP_SERVERS:
        if annotations.get("prometheus.io/port") != port:
            problem(f"{where}: prometheus.io/port {annotations.get('prometheus.io/port')} "
                    f"is not --port={port}, where {binary} serves /metrics")
    else:
        metrics_port = flags.get("metrics_port")
        if annotations.get("prometheus.io/port") != metrics_port or (
                metrics_port is None or ports.get(int(metrics_port)) != "metrics"):
            problem(f"{where}: prometheus.io/port {annotations.get('prometheus.io/port')}, "
                    f"--metrics_port={metrics_port} and the container port named metrics "
                    "differ")

    for volume in pod["spec"].get("volumes", []):
        if "secret" in volume and ("Secret", volume["secret"]["secretName"]) not in docs_by_kind:
            problem(f"{where}: volume {volume['name']} mounts a Secret that is not there")
        claim = volume.get("persistentVolumeClaim", {}).get("claimName")
        if claim is not None and ("PersistentVolumeClaim", claim) not in docs_by_kind:
            problem(f"{where}: volume {volume['name']} mounts a claim that is not there")
    return flags


def check_rendered(path, help_flags):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {(d["kind"], d["metadata"]["name"]): d for d in docs}

    def only(kind):
        found = [d for d in docs if d["kind"] == kind]
        if len(found) != 1:
            problem(f"{path}: {len(found)} {kind}s, want 1")
            return None
        return found[0]

    def deployment(component):
        found = [d for d in docs if d["kind"] == "Deployment" and
                 d["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component]
        if len(found) != 1:
            problem(f"{path}: {len(found)} Deployments of component {component}, want 1")
            return None
        return found[0]

    shards, coordinator = only("StatefulSet"), deployment("coordinator")
    ingest = deployment("ingest")
    pdb = only("PodDisruptionBudget")
    if None in (shards, coordinator, ingest, pdb):
        return
    flags = {}
    for workload in (shards, coordinator, ingest):
        pod = workload["spec"]["template"]
        where = f"{path}: {workload['kind']} {workload['metadata']['name']}"
        if not matches(workload["spec"]["selector"]["matchLabels"], pod["metadata"]["labels"]):
            problem(f"{where}: the selector does not select its own pods")
        for container in pod["spec"]["containers"]:
            flags[container["name"]] = check_container(where, container, pod, by_kind, help_flags)

    replicas = shards["spec"]["replicas"]
    counts = [(d["metadata"]["name"], d["data"]["NUM_SHARDS"]) for d in docs
              if d["kind"] == "ConfigMap" and "NUM_SHARDS" in d.get("data", {})]
    if len(counts) != 1 or counts[0][1] != str(replicas):
        problem(f"{path}: NUM_SHARDS in the ConfigMaps {counts}, but the StatefulSet has "
                f"{replicas} replicas")
    for name, flag_values in flags.items():
        if name in HTTP_SERVERS:
            continue
        if flag_values.get("num_shards") != "$(NUM_SHARDS)":
            problem(f"{path}: container {name} passes --num_shards={flag_values.get('num_shards')}"
                    ", not $(NUM_SHARDS)")
    if not matches(pdb["spec"]["selector"]["matchLabels"],
                   shards["spec"]["template"]["metadata"]["labels"]):
        problem(f"{path}: the PodDisruptionBudget does not select the shards")
    if not shards["spec"].get("volumeClaimTemplates"):
        problem(f"{path}: the StatefulSet has no volumeClaimTemplates")
    if coordinator["spec"]["replicas"] != 1 or coordinator["spec"]["strategy"]["type"] != "Recreate":
        problem(f"{path}: the coordinator must be one replica replaced with Recreate "
                "(two coordinators would each hand out R crawls/s)")
    if ingest["spec"]["replicas"] != 1 or ingest["spec"]["strategy"]["type"] != "Recreate":
        problem(f"{path}: the gateway must be one replica replaced with Recreate "
                "(its key volume is mounted by one pod at a time)")
    target = flags.get("ingest", {}).get("coordinator") or ""
    name, _, port = target.rpartition(":")
    service = by_kind.get(("Service", name))
    if service is None:
        problem(f"{path}: the gateway's --coordinator={target} names no Service")
    else:
        grpc = [p["port"] for p in service["spec"]["ports"] if p.get("targetPort") == "grpc"]
        if not port.isdigit() or int(port) not in grpc:
            problem(f"{path}: the gateway's --coordinator port {port} is not the gRPC port "
                    f"of Service {name}")
        if not matches(service["spec"]["selector"],
                       coordinator["spec"]["template"]["metadata"]["labels"]):
            problem(f"{path}: Service {name} does not select the coordinator")
    callback = flags.get("ingest", {}).get("websub_callback_base") or ""
    var = re.fullmatch(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", callback)
    values = [d["data"][var.group(1)] for d in docs
              if var and d["kind"] == "ConfigMap" and var.group(1) in d.get("data", {})]
    if not var or len(values) != 1:
        problem(f"{path}: the gateway's --websub_callback_base={callback} is not one ConfigMap's "
                "$(VAR)")
    elif not re.fullmatch(r"https://[^/\s]+(/[^\s]*)?/websub", values[0]):
        problem(f"{path}: {var.group(1)}={values[0]} is not an https URL ending in /websub")
    for service in (d for d in docs if d["kind"] == "Service"):
        if service["metadata"]["name"] == "recrawl-ingest" and not matches(
                service["spec"]["selector"], ingest["spec"]["template"]["metadata"]["labels"]):
            problem(f"{path}: Service recrawl-ingest does not select the gateway")

    # A gateway that sends straight to the shards reaches them as the
    # coordinator does: with a client certificate where they ask for one,
    # checking the same name in theirs.
    gateway, shard = flags.get("ingest", {}), flags.get("shard", {})
    if "route_to_shards" in gateway:
        if shard.get("tls_require_client_cert", "false") != "false":
            for flag in ("shard_tls_ca", "shard_tls_cert", "shard_tls_key"):
                if not gateway.get(flag):
                    problem(f"{path}: the shards ask for client certificates, but the gateway "
                            f"sends to them straight without --{flag}")
        if gateway.get("shard_tls_server_name") != flags.get("coordinator", {}).get(
                "shard_tls_server_name"):
            problem(f"{path}: the gateway checks --shard_tls_server_name="
                    f"{gateway.get('shard_tls_server_name')} in the shards' certificates, the "
                    "coordinator another name")

    dns = flags.get("coordinator", {}).get("shards_dns") or ""
    name, _, port = dns.rpartition(":")
    service = by_kind.get(("Service", name))
    if service is None:
        problem(f"{path}: --shards_dns={dns} names no Service")
    else:
        if service["spec"].get("clusterIP") != "None":
            problem(f"{path}: Service {name} is not headless (clusterIP: None)")
        if not port.isdigit() or int(port) not in [p["port"] for p in service["spec"]["ports"]]:
            problem(f"{path}: --shards_dns port {port} is not a port of Service {name}")
        if not matches(service["spec"]["selector"], shards["spec"]["template"]["metadata"]["labels"]):
            problem(f"{path}: Service {name} does not select the shards")
        if shards["spec"]["serviceName"] != name:
            problem(f"{path}: the StatefulSet's serviceName is not {name}")


def check_tokens(path):
    roles = set()
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"^(fetcher|pinger|operator|internal) ([!-~]{16,256})$", line.rstrip("\n"))
            if not m:
                problem(f"{path}:{number}: not '<role> <token>' (services/auth.h)")
            else:
                roles.add(m.group(1))
    if roles != {"fetcher", "pinger", "operator", "internal"}:
        problem(f"{path}: roles {sorted(roles)}, want one token of each role")


def dockerfile_stages(path):
    """[(stage name, [instructions with continuation lines joined])]."""
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            m = re.match(r"FROM\s+\S+(?:\s+AS\s+(\S+))?", line, re.I)
            stages.append((m.group(1), []))
        elif stages:
            stages[-1][1].append(line)
    return stages


def check_dockerfile(path, root, binaries):
    stages = dockerfile_stages(path)
    names = {name for name, _ in stages if name}
    for _, instructions in stages:
        for line in instructions:
            words = line.split()
            if words[0].upper() != "COPY":
                continue
            from_stage = [w for w in words[1:] if w.startswith("--from=")]
            sources = [w for w in words[1:-1] if not w.startswith("--")]
            if from_stage:
                if from_stage[0][len("--from="):] not in names:
                    problem(f"{path}: {line}: no stage {from_stage[0]}")
                continue
            for source in sources:
                if not os.path.exists(os.path.join(root, source)):
                    problem(f"{path}: {line}: {source} does not exist")

    runtime = " ".join(stages[-1][1])
    m = re.search(r"apt-get install ((?:\s*[-\w.+]+)+)", runtime)
    packages = {w for w in (m.group(1).split() if m else []) if not w.startswith("-")}
    if not packages:
        problem(f"{path}: the runtime stage installs no packages")
    if shutil.which("apt-cache") is None:
        print("SKIP: no apt-cache here: the runtime packages were not looked up")
    else:
        shown = subprocess.run(["apt-cache", "show", "--no-all-versions"] + sorted(packages),
                               capture_output=True, text=True).stdout
        for package in sorted(packages - set(re.findall(r"^Package: (\S+)", shown, re.M))):
            problem(f"{path}: package {package} is not known to apt-cache")

    if shutil.which("objdump") is None or shutil.which("dpkg") is None:
        print("SKIP: no objdump or dpkg here: the libraries were not mapped to packages")
        return
    needed_by = {}  # library path → (soname, the binaries that load it)
    for binary in binaries:
        dump = subprocess.run(["objdump", "-p", binary], capture_output=True, text=True).stdout
        resolved = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(
            ["ldd", binary], capture_output=True, text=True).stdout, re.M))
        for soname in re.findall(r"^\s*NEEDED\s+(\S+)", dump, re.M):
            if SANITIZER_LIB.match(soname) or LOADER_LIB.match(soname):
                continue
            if soname not in resolved:
                problem(f"{binary}: ldd does not resolve {soname}")
                continue
            needed_by.setdefault(resolved[soname], (soname, []))[1].append(
                os.path.basename(binary))
    # dpkg knows a library by the path its package installed, which with
    # usrmerge may be the /lib one ldd prints or the /usr/lib one it links to.
    owners = {}
    paths = sorted(needed_by)
    candidates = paths + [os.path.realpath(p) for p in paths]
    listing = subprocess.run(["dpkg", "-S"] + candidates, capture_output=True, text=True).stdout
    for line in listing.splitlines():
        package, _, owned = line.partition(": ")
        owners[owned.strip()] = package.split(":")[0]
    for lib, (soname, users) in sorted(needed_by.items()):
        package = owners.get(lib) or owners.get(os.path.realpath(lib))
        if package is None:
            problem(f"no Debian package owns {lib} ({soname}), which {', '.join(users)} load")
        elif package not in packages | BASE_IMAGE_PACKAGES:
            problem(f"{path}: {', '.join(users)} need {soname} from {package}, "
                    "which the runtime stage does not install")


def main(argv):
    command = argv[1]
    if command == "manifests":
        help_flags, rest = {}, argv[2:]
        while rest and rest[0] == "--help":
            binary, _, help_path = rest[1].partition("=")
            help_flags[binary] = helped_flags(help_path)
            if len(help_flags[binary]) < 5:
                problem(f"{help_path}: {binary} --helpfull lists {len(help_flags[binary])} flags")
            rest = rest[2:]
        for path in rest:
            check_rendered(path, help_flags)
    elif command == "tokens":
        check_tokens(argv[2])
    elif command == "dockerfile":
        check_dockerfile(argv[2], argv[3], argv[4:])
    else:
        sys.exit(f"unknown command {command}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
