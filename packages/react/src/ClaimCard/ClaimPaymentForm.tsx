import { Button, Group, NumberInput, SimpleGrid, Stack, Text, TextInput } from '@mantine/core';
import type { Claim } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { useAction } from '../provider/use-action.js';
import { recordClaimResponse, type ItemPayment, type RecordedResponse } from '../util/billing.js';

export interface ClaimPaymentFormProps {
  claim: Claim;
  onSaved: (answer: RecordedResponse) => void;
  onCancel?: () => void;
}

const amount = (v: string | number | undefined) => (typeof v === 'number' ? v : Number(v || 0));

/** The payer's answer to a claim: per line what was paid and what was written off, and the payer's message. */
export function ClaimPaymentForm({ claim, onSaved, onCancel }: ClaimPaymentFormProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const items = claim.item ?? [];
  const [paid, setPaid] = useState<Record<number, string | number>>({});
  const [adjusted, setAdjusted] = useState<Record<number, string | number>>({});
  const [disposition, setDisposition] = useState('');
  const save = action.submit(async () => {
    const payments: ItemPayment[] = items
      .filter((i) => paid[i.sequence] !== undefined && paid[i.sequence] !== '')
      .map((i) => ({ sequence: i.sequence, paid: amount(paid[i.sequence]), adjustment: amount(adjusted[i.sequence]) }));
    if (payments.length === 0) throw new Error('Enter what the payer paid for at least one line');
    const answer = await recordClaimResponse(client, claim.id as string, payments, disposition.trim() || undefined);
    client.invalidateSearches('ClaimResponse');
    client.invalidateSearches('ExplanationOfBenefit');
    onSaved(answer);
  });
  return (
    <form onSubmit={save} aria-label="Payer response">
      <Stack gap="xs">
        {items.map((item) => {
          const code = item.productOrService.coding?.[0]?.code ?? String(item.sequence);
          return (
            <div key={item.sequence}>
              <Text size="sm" fw={600}>
                Line {item.sequence}: {code}
              </Text>
              <SimpleGrid cols={{ base: 1, xs: 2 }}>
                <NumberInput
                  label={`Paid for line ${item.sequence}`}
                  min={0}
                  decimalScale={2}
                  value={paid[item.sequence] ?? ''}
                  onChange={(v) => setPaid((p) => ({ ...p, [item.sequence]: v }))}
                />
                <NumberInput
                  label={`Adjustment for line ${item.sequence}`}
                  min={0}
                  decimalScale={2}
                  value={adjusted[item.sequence] ?? ''}
                  onChange={(v) => setAdjusted((p) => ({ ...p, [item.sequence]: v }))}
                />
              </SimpleGrid>
            </div>
          );
        })}
        <TextInput label="Payer message" value={disposition} onChange={(e) => setDisposition(e.currentTarget.value)} />
        <OperationOutcomeAlert error={action.error} />
        <Group>
          <Button type="submit" loading={action.busy}>
            Save response
          </Button>
          {onCancel && (
            <Button variant="default" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </Group>
      </Stack>
    </form>
  );
}
