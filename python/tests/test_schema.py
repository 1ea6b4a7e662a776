"""The exported IR of every built-in case (at world 2) against
python/schema/ir-1.schema.json, with a validator for the part of JSON Schema
that file uses (written here: the package depends on torch only)."""

import json
import os
import re
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(os.path.dirname(HERE), "schema", "ir-1.schema.json")
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value, name):
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def validate(value, schema, root, where="$"):
    """The first violation as "where: why", or None."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return validate(value, target, root, where)
    if "oneOf" in schema:
        if sum(validate(value, s, root, where) is None for s in schema["oneOf"]) != 1:
            return f"{where}: {value!r} matches not exactly one of oneOf"
    if "const" in schema and value != schema["const"]:
        return f"{where}: expected {schema['const']!r}, got {value!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is none of {schema['enum']}"
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, n) for n in names):
            return f"{where}: expected {names}, got {type(value).__name__}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{where}: {value} < {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{where}: {value} > {schema['maximum']}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        return f"{where}: {value!r} does not match {schema['pattern']}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return f"{where}: {len(value)} items"
        for i, item in enumerate(value):
            why = validate(item, schema.get("items", {}), root, f"{where}[{i}]")
            if why:
                return why
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                return f"{where}: missing '{key}'"
        props = schema.get("properties", {})
        for key, item in value.items():
            sub = props.get(key, schema.get("additionalProperties", {}))
            why = validate(item, sub, root, f"{where}.{key}")
            if why:
                return why
    return None


class SchemaTest(unittest.TestCase):
    def setUp(self):
        with open(SCHEMA, encoding="utf-8") as f:
            self.schema = json.load(f)
        self.binary = os.environ.get("COLLGRAD_CHECK")
        if not self.binary:
            self.skipTest("COLLGRAD_CHECK (the built tool) is not set")

    def export(self, *args):
        out = subprocess.run([self.binary, "export-ir", *args], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    def test_every_builtin_case_exports_to_the_schema(self):
        for args in (["--world", "2"], []):
            doc = self.export(*args)
            self.assertGreater(len(doc["cases"]), 20)
            self.assertIsNone(validate(doc, self.schema, self.schema))

    def test_the_validator_catches_what_the_schema_forbids(self):
        doc = self.export("--world", "2")
        doc["cases"][0]["dtype"] = "f8"
        self.assertIn("dtype", validate(doc, self.schema, self.schema))
        doc = self.export("--world", "2")
        del doc["cases"][0]["program"][0]["at"]
        self.assertIn("missing 'at'", validate(doc, self.schema, self.schema))

    def test_communication_calls_are_numbered_like_the_plan(self):
        doc = self.export("--world", "2")
        for case in doc["cases"]:
            seqs = []

            def walk(node):
                if isinstance(node, dict):
                    if node.get("kind") == "call" and "seq" in node:
                        seqs.append((node["seq"], node["name"]))
                    for v in node.values():
                        walk(v)
                elif isinstance(node, list):
                    for v in node:
                        walk(v)

            walk(case["program"])
            self.assertEqual(sorted(s for s, _ in seqs), list(range(case["ncomm"])), case["name"])
            kinds = {e["seq"]: e["kind"] for e in case["plan"]}
            for seq, name in seqs:
                self.assertEqual(kinds[seq], name, f"{case['name']} #{seq}")


if __name__ == "__main__":
    unittest.main()
