import { Anchor, Badge, Group, List, Stack, Text } from '@mantine/core';
import { formatDate, type ExplanationOfBenefit, type Money } from '@hearth/core';
import type { MouseEvent, ReactNode } from 'react';
import { useHearthContext } from '../provider/HearthProvider.js';
import { formatMoney } from '../util/billing.js';

const ADJUDICATION = 'http://terminology.hl7.org/CodeSystem/adjudication';

const OUTCOME: Record<string, { label: string; color: string }> = {
  complete: { label: 'Processed', color: 'teal' },
  partial: { label: 'Partly processed', color: 'blue' },
  error: { label: 'Rejected', color: 'red' },
  queued: { label: 'Queued', color: 'gray' },
};

/** What an EOB's lines wrote off: submitted minus eligible (the adjudication codes $record-response writes). */
export function eobAdjustment(eob: ExplanationOfBenefit): Money | undefined {
  let cents = 0;
  let currency: string | undefined;
  for (const item of eob.item ?? []) {
    const amount = (code: string) =>
      item.adjudication?.find((a) => a.category.coding?.some((c) => c.system === ADJUDICATION && c.code === code))
        ?.amount;
    const submitted = amount('submitted');
    const eligible = amount('eligible');
    if (submitted?.value === undefined || eligible?.value === undefined) continue;
    cents += Math.round(submitted.value * 100) - Math.round(eligible.value * 100);
    currency ??= submitted.currency;
  }
  return eob.item?.length ? { value: cents / 100, currency: currency ?? 'USD' } : undefined;
}

/**
 * The ExplanationOfBenefits of a claim, one line each: when, the outcome, what was paid and
 * written off, the payer's message, and a link to the EOB itself.
 */
export function ExplanationList({ explanations }: { explanations: ExplanationOfBenefit[] }): ReactNode {
  const { navigate } = useHearthContext();
  if (explanations.length === 0) return null;
  return (
    <Stack gap={4}>
      <Text size="sm" fw={600}>
        Explanations of benefit
      </Text>
      <List size="sm" listStyleType="none" spacing={4} aria-label="Explanations of benefit">
        {explanations.map((eob) => {
          const path = `/ExplanationOfBenefit/${String(eob.id)}`;
          const when = formatDate(eob.payment?.date ?? eob.created, 'en-US', { dateStyle: 'medium' });
          const outcome = OUTCOME[eob.outcome] ?? { label: eob.outcome, color: 'gray' };
          const adjusted = eobAdjustment(eob);
          return (
            <List.Item key={eob.id} aria-label={`Explanation of benefit of ${when}`}>
              <Group gap="xs" wrap="wrap">
                <Anchor
                  href={path}
                  size="sm"
                  onClick={(e: MouseEvent) => {
                    e.preventDefault();
                    navigate(path);
                  }}
                >
                  EOB of {when}
                </Anchor>
                <Badge variant="light" color={outcome.color}>
                  {outcome.label}
                </Badge>
                {eob.payment?.amount && <Text size="sm">Paid {formatMoney(eob.payment.amount)}</Text>}
                {adjusted && <Text size="sm">Adjusted {formatMoney(adjusted)}</Text>}
                <Text size="sm" c="dimmed">
                  {(eob.item ?? []).length === 1 ? '1 line' : `${(eob.item ?? []).length} lines`}
                </Text>
              </Group>
              {eob.disposition && (
                <Text size="xs" c="dimmed">
                  {eob.disposition}
                </Text>
              )}
            </List.Item>
          );
        })}
      </List>
    </Stack>
  );
}
