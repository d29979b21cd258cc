import { ActionIcon, Button, Fieldset, Group, Select, Stack, Text } from '@mantine/core';
import { useState, type ReactNode } from 'react';
import { choiceBase, choiceProperty, type UiElement, type UiTypeSchema } from '../provider/metadata.js';
import { issuesAt } from '../util/outcome.js';
import { humanize, isBlank } from '../util/values.js';
import { useFormContext } from './context.js';
import { orderElements } from './element-order.js';
import { ValueInput, type NestedInputProps } from './ValueInput.js';

type Path = readonly (string | number)[];
type Obj = Record<string, unknown>;

export interface ElementsInputProps {
  schema: UiTypeSchema;
  value: Obj | undefined;
  onChange: (value: Obj) => void;
  path: Path;
  depth: number;
  /** Elements not to show (beyond the hidden ones). */
  exclude?: string[];
}

/**
 * Every element of a type in the order a person fills them (element-order.ts): plain, repeating,
 * or a choice of types; on a resource's form the technical elements fold under "More".
 */
export function ElementsInput({ schema, value, onChange, path, depth, exclude }: ElementsInputProps): ReactNode {
  const { main, more, open } = orderElements(schema, { exclude });
  const [showMore, setShowMore] = useState(() => more.some(([key]) => value?.[key] !== undefined));
  const set = (key: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined) {
      delete next[key];
    } else {
      next[key] = v;
    }
    onChange(next);
  };
  const input = ([key, element]: [string, UiElement]) =>
    key.endsWith('[x]') ? (
      <ChoiceInput key={key} name={key} element={element} value={value} onChange={onChange} path={path} depth={depth} />
    ) : element.isArray ? (
      <ArrayInput
        key={key}
        name={key}
        element={element}
        value={value?.[key] as unknown[] | undefined}
        onChange={(v) => set(key, v)}
        path={[...path, key]}
        depth={depth}
        startOpen={open.has(key)}
      />
    ) : (
      <ValueInput
        key={key}
        name={key}
        label={humanize(key)}
        element={element}
        typeCode={element.type[0]?.code ?? 'string'}
        value={value?.[key]}
        onChange={(v) => set(key, v)}
        path={[...path, key]}
        depth={depth}
        Nested={NestedInput}
      />
    );
  const moreId = `more-${path.join('-') || schema.name}`;
  return (
    <Stack gap="sm">
      {main.map(input)}
      {more.length > 0 && (
        <>
          <Group gap="xs">
            <Button
              variant="subtle"
              size="compact-sm"
              aria-expanded={showMore}
              aria-controls={moreId}
              aria-describedby={`${moreId}-list`}
              onClick={() => setShowMore((v) => !v)}
            >
              {showMore ? 'Fewer elements' : 'More elements'}
            </Button>
            <Text size="xs" c="dimmed" id={`${moreId}-list`}>
              {more.map(([key]) => humanize(key).toLowerCase()).join(', ')}
            </Text>
          </Group>
          {showMore && (
            <Stack gap="sm" id={moreId} role="group" aria-label="More elements">
              {more.map(input)}
            </Stack>
          )}
        </>
      )}
    </Stack>
  );
}

interface ArrayInputProps {
  name: string;
  element: UiElement;
  value: unknown[] | undefined;
  onChange: (value: unknown[] | undefined) => void;
  path: Path;
  depth: number;
  /** With no value yet, show one empty entry (not stored until something is typed into it). */
  startOpen?: boolean;
}

/** A repeating element: each item with a remove button, and an add button. */
function ArrayInput({ name, element, value, onChange, path, depth, startOpen }: ArrayInputProps): ReactNode {
  const { issues } = useFormContext();
  const typeCode = element.type[0]?.code ?? 'string';
  const [placeholder, setPlaceholder] = useState(startOpen && !value?.length);
  const items = value?.length ? value : placeholder ? [isPrimitiveCode(typeCode) ? '' : {}] : [];
  const label = humanize(name);
  const errors = issuesAt(issues, path);
  const update = (next: unknown[]) => onChange(next.length ? next : undefined);
  return (
    <Stack gap={4} role="group" aria-label={label}>
      {items.map((item, index) => (
        <Group key={index} align="flex-start" wrap="nowrap" gap="xs">
          <div style={{ flex: 1, minWidth: 0 }}>
            <ValueInput
              name={name}
              label={items.length > 1 ? `${label} ${index + 1}` : label}
              element={element}
              typeCode={typeCode}
              value={item}
              onChange={(v) => update(items.map((x, i) => (i === index ? v : x)))}
              path={[...path, index]}
              depth={depth}
              Nested={NestedInput}
            />
          </div>
          <ActionIcon
            variant="subtle"
            color="red"
            mt={24}
            aria-label={`Remove ${label} ${index + 1}`}
            onClick={() => {
              setPlaceholder(false);
              update(items.filter((_, i) => i !== index));
            }}
          >
            ×
          </ActionIcon>
        </Group>
      ))}
      <Button
        variant="light"
        size="compact-sm"
        w="fit-content"
        onClick={() => update([...items, isPrimitiveCode(typeCode) ? '' : {}])}
      >
        Add {label.toLowerCase()}
      </Button>
      {errors.length > 0 && (
        <Text size="xs" c="red" role="alert">
          {errors.join('; ')}
        </Text>
      )}
    </Stack>
  );
}

function isPrimitiveCode(code: string): boolean {
  return /^[a-z]/.test(code) || code.startsWith('http://hl7.org/fhirpath/');
}

interface ChoiceInputProps {
  name: string;
  element: UiElement;
  value: Obj | undefined;
  onChange: (value: Obj) => void;
  path: Path;
  depth: number;
}

/**
 * A choice element ('value[x]', hl7.org/fhir/R4/formats.html#choice): pick the type, then enter
 * the value under the property of that type ('valueQuantity').
 */
function ChoiceInput({ name, element, value, onChange, path, depth }: ChoiceInputProps): ReactNode {
  const codes = element.type.map((t) => t.code);
  const present = codes.find((code) => value?.[choiceProperty(name, code)] !== undefined);
  const [chosen, setChosen] = useState<string>(present ?? codes[0]);
  const typeCode = present ?? chosen;
  const property = choiceProperty(name, typeCode);
  const label = humanize(choiceBase(name));
  const replace = (code: string, v: unknown) => {
    const next = { ...value };
    for (const c of codes) delete next[choiceProperty(name, c)];
    if (!isBlank(v) || typeof v === 'boolean') next[choiceProperty(name, code)] = v;
    onChange(next);
  };
  return (
    <Group align="flex-start" gap="xs" wrap="nowrap">
      {codes.length > 1 && (
        <Select
          aria-label={`${label} type`}
          label={`${label} type`}
          data={codes}
          value={typeCode}
          w={160}
          allowDeselect={false}
          onChange={(code) => {
            if (code) {
              setChosen(code);
              if (present) replace(code, undefined);
            }
          }}
        />
      )}
      <div style={{ flex: 1, minWidth: 0 }}>
        <ValueInput
          name={property}
          label={label}
          element={element}
          typeCode={typeCode}
          value={value?.[property]}
          onChange={(v) => replace(typeCode, v)}
          path={[...path, property]}
          depth={depth}
          Nested={NestedInput}
        />
      </div>
    </Group>
  );
}

/** A nested complex value in a fieldset (a data type or a backbone element). */
function NestedInput(props: NestedInputProps): ReactNode {
  const { issues } = useFormContext();
  const errors = issuesAt(issues, props.path);
  // Optional nested values deep in the form start closed, so that a large type stays short.
  const inArray = typeof props.path[props.path.length - 1] === 'number';
  const [open, setOpen] = useState(props.depth < 2 || inArray || props.value !== undefined || !!props.required);
  if (!open) {
    return (
      <Button variant="subtle" size="compact-sm" w="fit-content" onClick={() => setOpen(true)}>
        Add {props.label.toLowerCase()}
      </Button>
    );
  }
  return (
    <Fieldset legend={props.label} variant="filled" p="sm">
      <ElementsInput
        schema={props.schema}
        value={props.value}
        onChange={(v) => props.onChange(isBlank(v) ? undefined : v)}
        path={props.path}
        depth={props.depth + 1}
      />
      {errors.length > 0 && (
        <Text size="xs" c="red" role="alert" mt={4}>
          {errors.join('; ')}
        </Text>
      )}
    </Fieldset>
  );
}
