/* json_schema.h — a JSON Schema (draft 2020-12) validator for the tests,
 * over cJSON, implementing only the keywords the report schema uses:
 *
 *   type, enum, const, minimum, maximum, pattern (POSIX extended regular
 *   expressions, searched like ECMA-262's), properties, required,
 *   additionalProperties, items (every element), maxItems, and $ref to a
 *   pointer inside the same document ("#/$defs/NAME"); boolean schemas.
 *   $schema, $id, $comment, $defs, title and description are accepted and
 *   change nothing.
 *
 * A schema that uses any other keyword is refused as a whole (never half
 * enforced): cg_schema_check walks every subschema, reached or not, so a
 * keyword added to the schema without support here fails every validation
 * instead of passing silently.
 *
 * Ownership: nothing is kept; schema and instance are only read. */
#ifndef CG_JSON_SCHEMA_H
#define CG_JSON_SCHEMA_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* Is schema one this validator implements fully? 0, or -1 with err
 * ("#/properties/x: unsupported keyword 'oneOf'"). */
int cg_schema_check(const cJSON *schema, char *err, size_t errlen);

/* Validate instance against schema (the root: $refs resolve in it).
 * 0 valid; 1 invalid, err holding the first violation with the instance's
 * JSON pointer ("/cases/0/status: \"maybe\" is not one of the allowed
 * values"); -1 the schema is unusable (cg_schema_check's errors, a $ref that
 * leads nowhere). */
int cg_schema_validate(const cJSON *schema, const cJSON *instance, char *err, size_t errlen);

#endif
