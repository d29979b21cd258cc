import { Checkbox, Group, Radio, Select, Stack, Textarea, TextInput, Autocomplete, MultiSelect } from '@mantine/core';
import type { Attachment, Coding, QuestionnaireItem, QuestionnaireItemAnswerOption, Reference } from '@hearth/core';
import type { ReactNode } from 'react';
import { AttachmentInput } from '../AttachmentInput/AttachmentInput.js';
import { CodingInput } from '../CodingInput/CodingInput.js';
import { DateTimeInput } from '../DateTimeInput/DateTimeInput.js';
import { NumericInput } from '../NumericInput/NumericInput.js';
import { ReferenceInput } from '../ReferenceInput/ReferenceInput.js';
import { answerValue, pickValue, valueKeyFor, type Answer } from './logic.js';
import { clearButtonProps } from '../util/a11y.js';

export interface AnswerInputProps {
  item: QuestionnaireItem;
  answers: Answer[];
  onChange: (answers: Answer[]) => void;
  error?: string;
}

function optionLabel(o: QuestionnaireItemAnswerOption): string {
  const v = answerValue(o);
  if (v && typeof v === 'object') {
    const c = v as Coding & Reference;
    return c.display ?? c.code ?? c.reference ?? '';
  }
  return String(v ?? '');
}

function optionKey(v: unknown): string {
  if (v && typeof v === 'object') {
    const c = v as Coding & Reference;
    return c.code !== undefined ? `${c.system ?? ''}|${c.code}` : (c.reference ?? JSON.stringify(v));
  }
  return String(v);
}

const REFERENCE_RESOURCE = 'http://hl7.org/fhir/StructureDefinition/questionnaire-referenceResource';

/**
 * The resource types a reference question may point to: the questionnaire-referenceResource
 * extensions (one per type); none means any type.
 */
export function referenceTypes(item: QuestionnaireItem): string[] | undefined {
  const named = (item.extension ?? [])
    .filter((e) => e.url === REFERENCE_RESOURCE && typeof e.valueCode === 'string')
    .map((e) => e.valueCode as string);
  return named.length ? named : undefined;
}

/** The input for one question, by item type (hl7.org/fhir/R4/valueset-item-type.html). */
export function AnswerInput({ item, answers, onChange, error }: AnswerInputProps): ReactNode {
  const label = item.text ?? item.linkId;
  const key = valueKeyFor(item.type);
  const first = answerValue(answers[0]);
  const common = { label, required: item.required, error, disabled: item.readOnly, name: item.linkId };
  const set = (value: unknown) => onChange(value === undefined || value === '' ? [] : [{ [key]: value } as Answer]);

  if ((item.type === 'choice' || item.type === 'open-choice') && item.answerOption?.length) {
    const options = item.answerOption.map((o) => ({
      value: optionKey(answerValue(o)),
      label: optionLabel(o),
      answer: pickValue(o),
    }));
    const chosen = answers.map((a) => optionKey(answerValue(a)));
    const toAnswers = (keys: string[]) => options.filter((o) => keys.includes(o.value)).map((o) => o.answer);
    if (item.repeats) {
      return options.length <= 8 ? (
        <Checkbox.Group {...common} value={chosen} onChange={(keys) => onChange(toAnswers(keys))}>
          <Stack gap={4} mt={4}>
            {options.map((o) => (
              <Checkbox key={o.value} value={o.value} label={o.label} />
            ))}
          </Stack>
        </Checkbox.Group>
      ) : (
        <MultiSelect
          {...common}
          searchable
          data={options}
          value={chosen}
          onChange={(keys) => onChange(toAnswers(keys))}
        />
      );
    }
    if (item.type === 'open-choice') {
      const text = answers[0] ? (options.find((o) => o.value === chosen[0])?.label ?? String(first ?? '')) : '';
      return (
        <Autocomplete
          {...common}
          data={options.map((o) => o.label)}
          value={text}
          onChange={(t) => {
            const option = options.find((o) => o.label === t);
            onChange(option ? [option.answer] : t ? [{ valueString: t }] : []);
          }}
        />
      );
    }
    return options.length <= 5 ? (
      <Radio.Group {...common} value={chosen[0] ?? null} onChange={(k) => onChange(toAnswers([k]))}>
        <Group gap="md" mt={4}>
          {options.map((o) => (
            <Radio key={o.value} value={o.value} label={o.label} />
          ))}
        </Group>
      </Radio.Group>
    ) : (
      <Select
        {...common}
        searchable
        clearable
        clearButtonProps={clearButtonProps(label)}
        data={options}
        value={chosen[0] ?? null}
        onChange={(k) => onChange(k ? toAnswers([k]) : [])}
      />
    );
  }

  switch (item.type) {
    case 'boolean':
      return (
        <Checkbox
          label={label}
          name={item.linkId}
          disabled={item.readOnly}
          error={error}
          checked={first === true}
          onChange={(e) => set(e.currentTarget.checked)}
        />
      );
    case 'decimal':
    case 'integer':
      // Only a number is an answer; other text stays on screen, marked, until it becomes one.
      return (
        <NumericInput
          {...common}
          integer={item.type === 'integer'}
          value={first as number | undefined}
          onChange={(v) => set(typeof v === 'number' ? v : undefined)}
        />
      );
    case 'date':
    case 'dateTime':
      return <DateTimeInput {...common} type={item.type} value={first as string} onChange={set} />;
    case 'time':
      return (
        <TextInput
          {...common}
          type="time"
          value={((first as string) ?? '').slice(0, 5)}
          onChange={(e) => set(e.currentTarget.value ? `${e.currentTarget.value}:00` : undefined)}
        />
      );
    case 'text':
      return (
        <Textarea
          {...common}
          autosize
          minRows={2}
          value={(first as string) ?? ''}
          onChange={(e) => set(e.currentTarget.value)}
        />
      );
    case 'choice':
    case 'open-choice':
      return <CodingInput {...common} valueSet={item.answerValueSet} value={first as Coding} onChange={set} />;
    case 'attachment':
      return <AttachmentInput label={label} error={error} value={first as Attachment} onChange={set} />;
    case 'reference':
      return (
        <ReferenceInput {...common} targetTypes={referenceTypes(item)} value={first as Reference} onChange={set} />
      );
    case 'quantity': {
      const q = (first as { value?: number; unit?: string } | undefined) ?? {};
      return (
        <Group gap="xs" align="flex-end">
          <NumericInput
            {...common}
            value={q.value}
            onChange={(v) => set(typeof v === 'number' ? { ...q, value: v } : q.unit ? { unit: q.unit } : undefined)}
          />
          <TextInput
            label={`${label} unit`}
            w={110}
            value={q.unit ?? ''}
            onChange={(e) => set({ ...q, unit: e.currentTarget.value || undefined })}
          />
        </Group>
      );
    }
    case 'url':
      return (
        <TextInput
          {...common}
          type="url"
          value={(first as string) ?? ''}
          onChange={(e) => set(e.currentTarget.value)}
        />
      );
    default:
      return <TextInput {...common} value={(first as string) ?? ''} onChange={(e) => set(e.currentTarget.value)} />;
  }
}
