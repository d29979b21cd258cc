import { Checkbox, Select, Textarea, TextInput, JsonInput } from '@mantine/core';
import type { Attachment, CodeableConcept, Coding, Reference } from '@hearth/core';
import { useState, type ComponentType, type ReactNode } from 'react';
import { AttachmentInput } from '../AttachmentInput/AttachmentInput.js';
import { CodeableConceptInput } from '../CodeableConceptInput/CodeableConceptInput.js';
import { CodingInput } from '../CodingInput/CodingInput.js';
import { DateTimeInput } from '../DateTimeInput/DateTimeInput.js';
import {
  bindingCodes,
  elementTypeSchema,
  referenceTargets,
  type UiElement,
  type UiTypeSchema,
} from '../provider/metadata.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { issuesAt } from '../util/outcome.js';
import { NumericInput } from '../NumericInput/NumericInput.js';
import { MAX_DEPTH, useFormContext } from './context.js';
import { clearButtonProps } from '../util/a11y.js';

/** A nested complex value: a data type or a backbone element, shown with its own elements. */
export interface NestedInputProps {
  label: string;
  schema: UiTypeSchema;
  value: Record<string, unknown> | undefined;
  onChange: (v: Record<string, unknown> | undefined) => void;
  path: readonly (string | number)[];
  depth: number;
  required?: boolean;
}

export interface ValueInputProps {
  name: string;
  label: string;
  element: UiElement;
  typeCode: string;
  value: unknown;
  onChange: (value: unknown) => void;
  path: readonly (string | number)[];
  depth: number;
  /**
   * Shows a nested complex value. ElementsInput passes its NestedInput, which shows ValueInputs in
   * turn: the form's recursion goes through this prop rather than an import cycle.
   */
  Nested: ComponentType<NestedInputProps>;
}

const NUMBER_TYPES = new Set(['integer', 'decimal', 'unsignedInt', 'positiveInt']);

/** One value of an element, with the input its type calls for. */
export function ValueInput(props: ValueInputProps): ReactNode {
  const { metadata, issues } = useFormContext();
  const { label, element, typeCode, value, onChange, path, depth, Nested } = props;
  const error = issuesAt(issues, path).join('; ') || undefined;
  const required = element.min > 0 && typeof path[path.length - 1] !== 'number';
  const common = { label, error, required, name: path.join('.') };

  switch (typeCode) {
    case 'boolean':
      return (
        <Checkbox
          label={label}
          name={common.name}
          error={error}
          checked={value === true}
          onChange={(e) => onChange(e.currentTarget.checked ? true : value === undefined ? undefined : false)}
        />
      );
    case 'date':
    case 'dateTime':
    case 'instant':
      return <DateTimeInput {...common} type={typeCode} value={value as string} onChange={onChange} />;
    case 'markdown':
      return (
        <Textarea
          {...common}
          autosize
          minRows={2}
          value={(value as string) ?? ''}
          onChange={(e) => onChange(e.currentTarget.value || undefined)}
        />
      );
    case 'code': {
      const codes = bindingCodes(metadata, element);
      if (codes && element.binding?.strength === 'required') {
        return (
          <Select
            {...common}
            clearable
            clearButtonProps={clearButtonProps(common.label)}
            data={[...new Set(codes.map((c) => c.code))]}
            value={(value as string) ?? null}
            onChange={(v) => onChange(v ?? undefined)}
          />
        );
      }
      return (
        <TextInput
          {...common}
          value={(value as string) ?? ''}
          onChange={(e) => onChange(e.currentTarget.value || undefined)}
        />
      );
    }
    case 'Reference': {
      const targets = element.type.flatMap((t) => (t.code === 'Reference' ? referenceTargets(t) : []));
      return <ReferenceInput {...common} targetTypes={targets} value={value as Reference} onChange={onChange} />;
    }
    case 'CodeableConcept':
      return (
        <CodeableConceptInput
          {...common}
          valueSet={element.binding?.valueSet}
          value={value as CodeableConcept}
          onChange={onChange}
        />
      );
    case 'Coding':
      return (
        <CodingInput {...common} valueSet={element.binding?.valueSet} value={value as Coding} onChange={onChange} />
      );
    case 'Attachment':
      return <AttachmentInput label={label} error={error} value={value as Attachment} onChange={onChange} />;
    case 'Resource':
    case 'Extension':
    case 'Narrative':
    case 'xhtml':
      return <RawJsonInput {...common} value={value} onChange={onChange} />;
  }
  if (NUMBER_TYPES.has(typeCode)) {
    // Text that is not a number is kept in the resource: the server's validation names the field.
    return (
      <NumericInput
        {...common}
        integer={typeCode !== 'decimal'}
        value={value as number | string | undefined}
        onChange={onChange}
      />
    );
  }
  const schema =
    /^[A-Z]/.test(typeCode) || element.contentReference ? elementTypeSchema(metadata, element, typeCode) : undefined;
  if (schema) {
    if (depth >= MAX_DEPTH) {
      return <RawJsonInput {...common} value={value} onChange={onChange} />;
    }
    return (
      <Nested
        label={label}
        schema={schema}
        value={value as Record<string, unknown>}
        onChange={onChange}
        path={path}
        depth={depth}
        required={required}
      />
    );
  }
  return (
    <TextInput
      {...common}
      value={(value as string) ?? ''}
      onChange={(e) => onChange(e.currentTarget.value || undefined)}
    />
  );
}

/** Any value as JSON text: for resources inside resources, extensions and narrative. */
function RawJsonInput(props: {
  label: string;
  error?: string;
  name: string;
  value: unknown;
  onChange: (v: unknown) => void;
}): ReactNode {
  const [text, setText] = useState(props.value === undefined ? '' : JSON.stringify(props.value, null, 2));
  const [syntax, setSyntax] = useState<string | undefined>(undefined);
  return (
    <JsonInput
      label={`${props.label} (JSON)`}
      name={props.name}
      autosize
      minRows={2}
      value={text}
      error={syntax ?? props.error}
      onChange={(t) => {
        setText(t);
        if (!t.trim()) {
          setSyntax(undefined);
          props.onChange(undefined);
          return;
        }
        try {
          props.onChange(JSON.parse(t));
          setSyntax(undefined);
        } catch (err) {
          setSyntax((err as Error).message);
        }
      }}
    />
  );
}
