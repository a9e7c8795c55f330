// Validates the OpenAPI document on stdin with @seriousme/openapi-schema-validator (an ES module, which
// jest's CommonJS transform cannot load) and prints the result as JSON.
import { Validator } from '@seriousme/openapi-schema-validator';

let text = '';
for await (const chunk of process.stdin) text += chunk;
process.stdout.write(JSON.stringify(await new Validator().validate(JSON.parse(text))));
