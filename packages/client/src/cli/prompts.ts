import { confirm, input, number, select } from '@inquirer/prompts';
import type { ElicitationProperty, ElicitResult, InputRequest, InputResponses } from '../types.js';

type FieldValue = string | number | boolean;

/**
 * One elicitation as terminal prompts: accept / decline / cancel first, then one prompt per field
 * of its form schema (boolean → yes/no, enum → a list, number/integer → a checked number,
 * string → text). Required fields cannot be left empty; optional ones left empty are omitted.
 */
export async function promptElicitation(key: string, request: InputRequest): Promise<ElicitResult> {
  const params = request.params ?? {};
  const schema = params.requestedSchema;
  process.stderr.write(`\n? ${params.message ?? key}  [${key}]\n`);
  const action = await select<'accept' | 'decline' | 'cancel'>({
    message: 'Your answer',
    choices: [
      { name: 'Answer', value: 'accept' },
      { name: 'Decline', value: 'decline' },
      { name: 'Cancel', value: 'cancel' },
    ],
  });
  if (action !== 'accept') return { action };
  const required = new Set(schema?.required ?? []);
  const content: Record<string, FieldValue> = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const value = await promptField(name, property, required.has(name));
    if (value !== undefined) content[name] = value;
  }
  return { action: 'accept', content };
}

async function promptField(
  name: string,
  property: ElicitationProperty,
  required: boolean,
): Promise<FieldValue | undefined> {
  const label = `${property.title ?? name}${property.description ? ` (${property.description})` : ''}${required ? '' : ' [optional]'}`;
  const choices = enumChoices(property);
  if (choices !== undefined) {
    const options = required ? choices : [{ name: '(leave empty)', value: undefined }, ...choices];
    return select<FieldValue | undefined>({
      message: label,
      choices: options,
      ...(property.default === undefined ? {} : { default: property.default }),
    });
  }
  switch (property.type) {
    case 'boolean':
      return confirm({
        message: label,
        ...(typeof property.default === 'boolean' ? { default: property.default } : {}),
      });
    case 'number':
    case 'integer': {
      const value = await number({
        message: label,
        required,
        step: 'any',
        ...(property.type === 'integer'
          ? {
              validate: (v: number | undefined) =>
                v === undefined || Number.isInteger(v) || 'Enter a whole number',
            }
          : {}),
        ...(typeof property.minimum === 'number' ? { min: property.minimum } : {}),
        ...(typeof property.maximum === 'number' ? { max: property.maximum } : {}),
        ...(typeof property.default === 'number' ? { default: property.default } : {}),
      });
      return value;
    }
    default: {
      const value = await input({
        message: label,
        required,
        ...(typeof property.default === 'string' ? { default: property.default } : {}),
      });
      return value === '' ? undefined : value;
    }
  }
}

function enumChoices(
  property: ElicitationProperty,
): { name: string; value: FieldValue }[] | undefined {
  if (Array.isArray(property.oneOf)) {
    return property.oneOf.map((o) => ({ name: o.title ?? o.const, value: o.const }));
  }
  if (Array.isArray(property.enum)) {
    return property.enum.map((value, i) => ({
      name: property.enumNames?.[i] ?? String(value),
      value,
    }));
  }
  return undefined;
}

/** Prompts for every request in turn; a request that is not a form elicitation cannot be answered here. */
export async function promptAll(requests: Record<string, InputRequest>): Promise<InputResponses> {
  const answers: InputResponses = {};
  for (const [key, request] of Object.entries(requests)) {
    if (request.method !== 'elicitation/create') {
      process.stderr.write(
        `  ${key}: a ${request.method} request cannot be answered from a terminal\n`,
      );
      continue;
    }
    answers[key] = await promptElicitation(key, request);
  }
  return answers;
}
