import {
  ActionIcon,
  Button,
  Checkbox,
  Fieldset,
  Group,
  Select,
  Stack,
  Tabs,
  TagsInput,
  TextInput,
} from '@mantine/core';
import type { Questionnaire, QuestionnaireItem, QuestionnaireItemEnableWhen } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { QuestionnaireForm } from '../QuestionnaireForm/QuestionnaireForm.js';
import { useAction } from '../provider/use-action.js';
import { clearButtonProps } from '../util/a11y.js';

export interface QuestionnaireBuilderProps {
  defaultValue: Questionnaire;
  onSubmit: (questionnaire: Questionnaire) => Promise<unknown> | void;
}

const ITEM_TYPES: QuestionnaireItem['type'][] = [
  'group',
  'display',
  'boolean',
  'decimal',
  'integer',
  'date',
  'dateTime',
  'time',
  'string',
  'text',
  'url',
  'choice',
  'open-choice',
  'attachment',
  'reference',
  'quantity',
];

function allLinkIds(items: QuestionnaireItem[] | undefined): string[] {
  return (items ?? []).flatMap((i) => [i.linkId, ...allLinkIds(i.item)]);
}

function nextLinkId(q: Questionnaire): string {
  const taken = new Set(allLinkIds(q.item));
  let n = taken.size + 1;
  while (taken.has(`q${n}`)) n++;
  return `q${n}`;
}

/** Builds a Questionnaire: items (nested groups), types, options, required/repeats, enableWhen; with a live preview. */
export function QuestionnaireBuilder({ defaultValue, onSubmit }: QuestionnaireBuilderProps): ReactNode {
  const [q, setQ] = useState<Questionnaire>({ ...defaultValue, status: defaultValue.status ?? 'draft' });
  const { busy, error, submit } = useAction();
  const questions = allLinkIds(q.item);
  const newItem = (): QuestionnaireItem => ({ linkId: nextLinkId(q), type: 'string', text: '' });
  return (
    <Tabs defaultValue="edit" keepMounted={false}>
      <Tabs.List>
        <Tabs.Tab value="edit">Edit</Tabs.Tab>
        <Tabs.Tab value="preview">Preview</Tabs.Tab>
      </Tabs.List>
      <Tabs.Panel value="edit" pt="md">
        <form
          onSubmit={submit(async () => {
            await onSubmit(q);
          })}
        >
          <Stack>
            <Group grow>
              <TextInput
                label="Title"
                value={q.title ?? ''}
                onChange={(e) => setQ({ ...q, title: e.currentTarget.value || undefined })}
              />
              <Select
                label="Status"
                data={['draft', 'active', 'retired', 'unknown']}
                value={q.status}
                allowDeselect={false}
                onChange={(s) => s && setQ({ ...q, status: s as Questionnaire['status'] })}
              />
            </Group>
            <ItemsEditor
              items={q.item ?? []}
              questions={questions}
              onChange={(item) => setQ({ ...q, item })}
              newItem={newItem}
            />
            {error !== undefined && <OperationOutcomeAlert error={error} />}
            <Group>
              <Button type="submit" loading={busy}>
                Save questionnaire
              </Button>
            </Group>
          </Stack>
        </form>
      </Tabs.Panel>
      <Tabs.Panel value="preview" pt="md">
        <QuestionnaireForm questionnaire={q} onSubmit={() => undefined} submitLabel="Submit (preview)" />
      </Tabs.Panel>
    </Tabs>
  );
}

function ItemsEditor(props: {
  items: QuestionnaireItem[];
  questions: string[];
  onChange: (items: QuestionnaireItem[]) => void;
  newItem: () => QuestionnaireItem;
}): ReactNode {
  const { items, onChange } = props;
  const move = (i: number, d: number) => {
    const next = [...items];
    const [x] = next.splice(i, 1);
    next.splice(i + d, 0, x);
    onChange(next);
  };
  return (
    <Stack gap="sm">
      {items.map((item, i) => (
        <ItemEditor
          key={i}
          item={item}
          questions={props.questions}
          newItem={props.newItem}
          onChange={(next) => onChange(items.map((x, j) => (j === i ? next : x)))}
          onRemove={() => onChange(items.filter((_, j) => j !== i))}
          onUp={i > 0 ? () => move(i, -1) : undefined}
          onDown={i < items.length - 1 ? () => move(i, 1) : undefined}
        />
      ))}
      <Button variant="light" w="fit-content" onClick={() => onChange([...items, props.newItem()])}>
        Add item
      </Button>
    </Stack>
  );
}

function ItemEditor(props: {
  item: QuestionnaireItem;
  questions: string[];
  newItem: () => QuestionnaireItem;
  onChange: (item: QuestionnaireItem) => void;
  onRemove: () => void;
  onUp?: () => void;
  onDown?: () => void;
}): ReactNode {
  const { item, onChange } = props;
  const set = (patch: Partial<QuestionnaireItem>) => onChange({ ...item, ...patch });
  const name = item.text || item.linkId;
  const condition = item.enableWhen?.[0];
  const setCondition = (c: Partial<QuestionnaireItemEnableWhen> | undefined) =>
    set({
      enableWhen: c ? [{ question: '', operator: '=', ...condition, ...c } as QuestionnaireItemEnableWhen] : undefined,
    });
  return (
    <Fieldset legend={`${item.linkId} · ${item.type}`} p="sm" aria-label={`Item ${name}`}>
      <Stack gap="xs">
        <Group grow align="flex-end">
          <TextInput
            label="Text"
            value={item.text ?? ''}
            onChange={(e) => set({ text: e.currentTarget.value || undefined })}
          />
          <TextInput label="Link id" value={item.linkId} onChange={(e) => set({ linkId: e.currentTarget.value })} />
          <Select
            label="Type"
            data={ITEM_TYPES}
            value={item.type}
            allowDeselect={false}
            onChange={(t) => t && set({ type: t as QuestionnaireItem['type'] })}
          />
        </Group>
        <Group>
          <Checkbox
            label="Required"
            checked={!!item.required}
            onChange={(e) => set({ required: e.currentTarget.checked || undefined })}
          />
          <Checkbox
            label="Repeats"
            checked={!!item.repeats}
            onChange={(e) => set({ repeats: e.currentTarget.checked || undefined })}
          />
          <Checkbox
            label="Read only"
            checked={!!item.readOnly}
            onChange={(e) => set({ readOnly: e.currentTarget.checked || undefined })}
          />
        </Group>
        {(item.type === 'choice' || item.type === 'open-choice') && (
          <>
            <TagsInput
              label="Answer options"
              description="Press Enter after each option"
              value={(item.answerOption ?? []).map(
                (o) => o.valueCoding?.display ?? o.valueCoding?.code ?? o.valueString ?? '',
              )}
              onChange={(labels) =>
                set({
                  answerOption: labels.length
                    ? labels.map((l) => ({ valueCoding: { code: l.toLowerCase().replace(/\s+/g, '-'), display: l } }))
                    : undefined,
                })
              }
            />
            <TextInput
              label="Answer value set (URL)"
              value={item.answerValueSet ?? ''}
              onChange={(e) => set({ answerValueSet: e.currentTarget.value || undefined })}
            />
          </>
        )}
        <Group align="flex-end" grow>
          <Select
            label="Enable when question"
            clearable
            clearButtonProps={clearButtonProps('enable when question')}
            data={props.questions.filter((l) => l !== item.linkId)}
            value={condition?.question ?? null}
            onChange={(question) => setCondition(question ? { question } : undefined)}
          />
          {condition && (
            <>
              <Select
                label="Operator"
                data={['exists', '=', '!=', '>', '<', '>=', '<=']}
                value={condition.operator}
                allowDeselect={false}
                onChange={(op) => op && setCondition({ operator: op as QuestionnaireItemEnableWhen['operator'] })}
              />
              <TextInput
                label="Answer"
                description="true/false, a number, a code or text"
                value={String(
                  condition.answerBoolean ??
                    condition.answerDecimal ??
                    condition.answerCoding?.code ??
                    condition.answerString ??
                    '',
                )}
                onChange={(e) => setCondition(parseConditionAnswer(e.currentTarget.value, condition.operator))}
              />
            </>
          )}
        </Group>
        {item.type === 'group' && (
          <ItemsEditor
            items={item.item ?? []}
            questions={props.questions}
            newItem={props.newItem}
            onChange={(children) => set({ item: children.length ? children : undefined })}
          />
        )}
        <Group gap="xs">
          <ActionIcon variant="default" aria-label={`Move ${name} up`} disabled={!props.onUp} onClick={props.onUp}>
            ↑
          </ActionIcon>
          <ActionIcon
            variant="default"
            aria-label={`Move ${name} down`}
            disabled={!props.onDown}
            onClick={props.onDown}
          >
            ↓
          </ActionIcon>
          <Button variant="subtle" color="red" size="compact-sm" onClick={props.onRemove}>
            Remove {name}
          </Button>
        </Group>
      </Stack>
    </Fieldset>
  );
}

/** The typed answer[x] of an enableWhen from what was typed. */
function parseConditionAnswer(text: string, operator: string): Partial<QuestionnaireItemEnableWhen> {
  const cleared = {
    answerBoolean: undefined,
    answerDecimal: undefined,
    answerCoding: undefined,
    answerString: undefined,
  };
  if (text === 'true' || text === 'false' || operator === 'exists') {
    return { ...cleared, answerBoolean: text !== 'false' };
  }
  if (text.trim() !== '' && Number.isFinite(Number(text))) {
    return { ...cleared, answerDecimal: Number(text) };
  }
  if (/^[a-z0-9-]+$/.test(text)) {
    return { ...cleared, answerCoding: { code: text } };
  }
  return { ...cleared, answerString: text };
}
