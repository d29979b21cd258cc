import { ActionIcon, Button, Fieldset, Group, Stack, Text, Title } from '@mantine/core';
import type { Questionnaire, QuestionnaireItem, QuestionnaireResponse, Reference } from '@hearth/core';
import { useMemo, useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useAction } from '../provider/use-action.js';
import { AnswerInput } from './AnswerInput.js';
import {
  buildResponse,
  collectAnswers,
  initialItems,
  isEnabled,
  missingRequired,
  type Answer,
  type ResponseItem,
} from './logic.js';

export interface QuestionnaireFormProps {
  questionnaire: Questionnaire;
  subject?: Reference;
  /** Receives the QuestionnaireResponse; a rejection's OperationOutcome is shown. */
  onSubmit: (response: QuestionnaireResponse) => Promise<unknown> | void;
  submitLabel?: string;
}

/**
 * Renders a Questionnaire: every item type, enableWhen (shown only while its conditions hold),
 * repeating groups and questions, required answers; produces a QuestionnaireResponse.
 */
export function QuestionnaireForm({
  questionnaire,
  subject,
  onSubmit,
  submitLabel = 'Submit',
}: QuestionnaireFormProps): ReactNode {
  const [items, setItems] = useState<ResponseItem[]>(() => initialItems(questionnaire.item));
  const { busy, error, run } = useAction();
  const [missing, setMissing] = useState<string[]>([]);
  const answers = useMemo(() => collectAnswers(items), [items]);

  return (
    <form
      aria-label={questionnaire.title ?? questionnaire.name ?? 'Questionnaire'}
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        const absent = missingRequired(questionnaire.item, items, answers);
        setMissing(absent);
        if (absent.length) return;
        await run(async () => {
          await onSubmit(buildResponse(questionnaire, items, subject));
        });
      }}
    >
      <Stack gap="md">
        {questionnaire.title && <Title order={3}>{questionnaire.title}</Title>}
        <ItemsView
          qItems={questionnaire.item ?? []}
          rItems={items}
          onChange={setItems}
          answers={answers}
          missing={missing}
        />
        {missing.length > 0 && (
          <Text c="red" role="alert" size="sm">
            Please answer the required questions.
          </Text>
        )}
        {error !== undefined && <OperationOutcomeAlert error={error} />}
        <Group>
          <Button type="submit" loading={busy}>
            {submitLabel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}

interface ItemsViewProps {
  qItems: QuestionnaireItem[];
  rItems: ResponseItem[];
  onChange: (items: ResponseItem[]) => void;
  answers: Map<string, Answer[]>;
  missing: string[];
}

function ItemsView({ qItems, rItems, onChange, answers, missing }: ItemsViewProps): ReactNode {
  return (
    <Stack gap="sm">
      {qItems.map((q) => {
        if (!isEnabled(q, answers)) return null;
        if (q.type === 'display') {
          return (
            <Text key={q.linkId} size="sm">
              {q.text}
            </Text>
          );
        }
        // This item's instances in the response; others are kept in place around them.
        const instances = rItems.filter((r) => r.linkId === q.linkId);
        const shown = instances.length ? instances : [{ linkId: q.linkId, text: q.text } as ResponseItem];
        const replace = (next: ResponseItem[]) => {
          const others = rItems.filter((r) => r.linkId !== q.linkId);
          const at = rItems.findIndex((r) => r.linkId === q.linkId);
          const position = at < 0 ? others.length : rItems.slice(0, at).filter((r) => r.linkId !== q.linkId).length;
          onChange([...others.slice(0, position), ...next, ...others.slice(position)]);
        };
        const update = (index: number, item: ResponseItem) => replace(shown.map((r, i) => (i === index ? item : r)));
        if (q.type === 'group') {
          return (
            <Stack key={q.linkId} gap="xs">
              {shown.map((instance, index) => (
                <Fieldset
                  key={index}
                  legend={q.text ?? q.linkId}
                  variant="filled"
                  p="sm"
                  role="group"
                  aria-label={`${q.text ?? q.linkId}${shown.length > 1 ? ` ${index + 1}` : ''}`}
                >
                  <ItemsView
                    qItems={q.item ?? []}
                    rItems={instance.item ?? []}
                    onChange={(children) => update(index, { ...instance, item: children })}
                    answers={answers}
                    missing={missing}
                  />
                  {q.repeats && shown.length > 1 && (
                    <Button
                      mt="xs"
                      variant="subtle"
                      color="red"
                      size="compact-sm"
                      onClick={() => replace(shown.filter((_, i) => i !== index))}
                    >
                      Remove {q.text ?? q.linkId} {index + 1}
                    </Button>
                  )}
                </Fieldset>
              ))}
              {q.repeats && (
                <Button
                  variant="light"
                  size="compact-sm"
                  w="fit-content"
                  onClick={() => replace([...shown, { linkId: q.linkId, text: q.text, item: initialItems(q.item) }])}
                >
                  Add {q.text ?? q.linkId}
                </Button>
              )}
            </Stack>
          );
        }
        const instance = shown[0];
        const error = missing.includes(q.linkId) ? 'An answer is required' : undefined;
        const setAnswers = (a: Answer[]) => update(0, { ...instance, answer: a });
        const isChoiceList = (q.type === 'choice' || q.type === 'open-choice') && !!q.answerOption?.length;
        if (q.repeats && !isChoiceList) {
          const list = instance.answer?.length ? instance.answer : [{}];
          return (
            <Stack key={q.linkId} gap={4}>
              {list.map((a, i) => (
                <Group key={i} align="flex-end" wrap="nowrap">
                  <div style={{ flex: 1 }}>
                    <AnswerInput
                      item={{ ...q, text: list.length > 1 ? `${q.text ?? q.linkId} ${i + 1}` : q.text }}
                      answers={[a]}
                      error={i === 0 ? error : undefined}
                      onChange={(next) => setAnswers(list.map((x, j) => (j === i ? (next[0] ?? {}) : x)))}
                    />
                  </div>
                  {list.length > 1 && (
                    <ActionIcon
                      variant="subtle"
                      color="red"
                      aria-label={`Remove answer ${i + 1}`}
                      onClick={() => setAnswers(list.filter((_, j) => j !== i))}
                    >
                      ×
                    </ActionIcon>
                  )}
                </Group>
              ))}
              <Button variant="subtle" size="compact-sm" w="fit-content" onClick={() => setAnswers([...list, {}])}>
                Add answer to {q.text ?? q.linkId}
              </Button>
            </Stack>
          );
        }
        return (
          <Stack key={q.linkId} gap={4}>
            <AnswerInput item={q} answers={instance.answer ?? []} onChange={setAnswers} error={error} />
            {q.item?.length ? (
              <div style={{ paddingLeft: 16 }}>
                <ItemsView
                  qItems={q.item}
                  rItems={instance.item ?? []}
                  onChange={(children) => update(0, { ...instance, item: children })}
                  answers={answers}
                  missing={missing}
                />
              </div>
            ) : null}
          </Stack>
        );
      })}
    </Stack>
  );
}
