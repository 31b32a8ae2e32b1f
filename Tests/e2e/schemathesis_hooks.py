"""schemathesis hooks for `test_api_schemathesis.py` (loaded through `hooks` in the generated schemathesis.toml).

tus PATCH bodies are `application/offset+octet-stream`: raw bytes, sent as schemathesis sends `application/octet-stream`.

A multipart file part has no type on the wire: schemathesis's negative data may make a file part an integer (`52`),
sends it as the two bytes `52`, and then expects a refusal. No server can tell that part from a file holding "52".
schemathesis already lets such type changes pass for path and query parameters (they are text on the wire too), not yet
for multipart parts; `filter_failure` drops exactly that case and nothing else: an accepted negative multipart body
whose every mutation is a type change of a file part into a number or a boolean.
"""
import schemathesis
from schemathesis.core.failures import AcceptedNegativeData
from schemathesis.core.mutations import OperatorKind
from schemathesis.core.parameters import ParameterLocation

schemathesis.serializer.alias("application/offset+octet-stream", "application/octet-stream")


def _binary_property(case, name: str) -> bool:
    """Whether the operation's multipart schema declares `name` as a file: a string with a media type or `binary`."""
    raw = case.operation.schema.raw_schema
    for body in case.operation.body:
        if body.media_type != case.media_type:
            continue
        schema = body.definition.get("schema", {})
        if "$ref" in schema:  # "#/components/schemas/AssetUpload"
            schema = raw["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
        prop = schema.get("properties", {}).get(name, {})
        return prop.get("type") == "string" and ("contentMediaType" in prop or prop.get("format") == "binary")
    return False


def _number_sent_as_file_part(case) -> bool:
    if not (case.media_type or "").startswith("multipart/form-data") or not isinstance(case.body, dict):
        return False
    mutations = getattr(case.meta.phase.data, "mutations", None) if case.meta else None
    if not mutations:
        return False
    for mutation in mutations:
        name = mutation.schema_pointer.rsplit("/", 1)[-1]
        if (mutation.operator != OperatorKind.CHANGE_TYPE
                or mutation.parameter_location != ParameterLocation.BODY
                or mutation.schema_pointer != f"/properties/{name}"
                or not isinstance(case.body.get(name), (int, float, bool))
                or not _binary_property(case, name)):
            return False
    return True


@schemathesis.hook
def filter_failure(context, failure, case, response):
    return not (isinstance(failure, AcceptedNegativeData) and _number_sent_as_file_part(case))
