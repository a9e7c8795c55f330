#!/usr/bin/env python3
"""A gRPC client of the platform written as another team would write one: Python, Debian's grpcio, and the stubs
built exactly as docs/grpc.md says (Debian's protoc and grpc_python_plugin; deploy/local/test/python-client.ts runs
the documented command and passes the directory it made).

It reads one JSON call per line on stdin:
  {"id": 1, "address": "127.0.0.1:50051", "method": "platformadmin.authz.v1.AuthzService/Check",
   "request": {...}, "token": "..." | null}
and answers one JSON line per call on stdout:
  {"id": 1, "code": "OK" | "PERMISSION_DENIED" | ..., "details": "...", "response": {...}}
The first line it prints says it is ready, and what the standard library's platform.system() answers once the
stubs are imported (generated packages must not shadow standard-library modules)."""

import importlib
import json
import os
import sys


def main() -> None:
    out = sys.argv[1]
    sys.path.insert(0, out)

    import grpc
    from google.protobuf import json_format, symbol_database

    # Import every generated module, so each service's stub and messages are known by name.
    stubs = {}
    for folder, _dirs, files in os.walk(os.path.join(out, "platformadmin")):
        for f in files:
            if f.endswith("_pb2_grpc.py"):
                module = os.path.relpath(os.path.join(folder, f[:-3]), out).replace(os.sep, ".")
                stubs[module] = importlib.import_module(module)
    import platform  # after the stubs: it must still be the standard library's

    pool = symbol_database.Default().pool
    print(json.dumps({"ready": True, "platform_system": platform.system(), "grpc": grpc.__version__}), flush=True)

    channels = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        call = json.loads(line)
        service_name, method_name = call["method"].split("/")
        service = pool.FindServiceByName(service_name)
        method = service.FindMethodByName(method_name)
        module = stubs[service.file.name[:-len(".proto")].replace("/", ".") + "_pb2_grpc"]
        channel = channels.setdefault(call["address"], grpc.insecure_channel(call["address"]))
        stub = getattr(module, service.name + "Stub")(channel)
        request_class = symbol_database.Default().GetSymbol(method.input_type.full_name)
        request = json_format.ParseDict(call.get("request", {}), request_class())
        metadata = [("authorization", "Bearer " + call["token"])] if call.get("token") else []
        answer = {"id": call.get("id")}
        try:
            response = getattr(stub, method_name)(request, metadata=metadata, timeout=10)
            answer.update(code="OK", details="", response=json_format.MessageToDict(response))
        except grpc.RpcError as err:
            answer.update(code=err.code().name, details=err.details())
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
