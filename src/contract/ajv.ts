import type { Ajv } from 'ajv';
import type { Format, Options as AjvOptions } from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { AjvCustomizer } from 'openapi-backend';

// Both packages are CommonJS with a default export; under NodeNext the class sits on `.default`.
const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

/** A JSON Schema 2020-12 validator (the dialect of OpenAPI 3.1) with the standard formats checked. */
export function createAjv2020(options: AjvOptions = {}): Ajv {
  const ajv = new Ajv2020({ strict: false, allErrors: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * openapi-backend always builds a draft-07 Ajv, which misreads 2020-12 keywords. This hands it a
 * 2020-12 instance built with the same options (they carry coercion and defaults for parameters)
 * and keeps the extra OpenAPI formats (int32, int64, float, double, byte...) it registered. The
 * instance has no meta-schemas: nothing validates a schema against them (validateSchema: false),
 * and adding them was most of the time it took to build one. ContractBackend asks once per set
 * of options and shares the instance among all the operations' validators.
 */
export const ajv2020Customizer: AjvCustomizer = (originalAjv, ajvOptions) => {
  const ajv = new Ajv2020({ ...ajvOptions, strict: false, validateSchema: false, meta: false });
  addFormats(ajv);
  const originalFormats = (originalAjv as unknown as { formats: Record<string, unknown> }).formats;
  const addedFormats = (ajv as unknown as { formats: Record<string, unknown> }).formats;
  for (const [name, format] of Object.entries(originalFormats)) {
    if (!(name in addedFormats)) ajv.addFormat(name, format as Format);
  }
  return ajv;
};
