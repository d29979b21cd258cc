import { Group, Progress, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { formatMoney, type BalanceAnswer } from '../util/billing.js';

/**
 * Where a claim's money went, as one bar: paid by the payer, adjusted (written off), and the
 * balance still to collect, each a share of the total; the amounts beside it in words.
 */
export function BalanceBar({ balance }: { balance: BalanceAnswer }): ReactNode {
  const total = balance.total?.value ?? 0;
  const share = (v: number | undefined) => (total > 0 ? Math.max(0, ((v ?? 0) / total) * 100) : 0);
  const parts = [
    { label: 'Paid', money: balance.paid, color: 'teal.8' },
    { label: 'Adjusted', money: balance.adjustment, color: 'gray.6' },
    { label: 'Balance', money: balance.balance, color: 'orange.8' },
  ];
  return (
    <Stack gap={4} role="group" aria-label="Claim balance">
      <Progress.Root size="lg" aria-hidden>
        {parts.map((p) => (
          <Progress.Section key={p.label} value={share(p.money?.value)} color={p.color} />
        ))}
      </Progress.Root>
      <Group gap="md" wrap="wrap">
        <Text size="sm">Total {formatMoney(balance.total)}</Text>
        {parts.map((p) => (
          <Text size="sm" key={p.label} fw={p.label === 'Balance' ? 700 : undefined}>
            {p.label} {formatMoney(p.money)}
          </Text>
        ))}
      </Group>
      {balance.responses === 0 && (
        <Text size="xs" c="dimmed">
          Awaiting the payer&apos;s answer
        </Text>
      )}
    </Stack>
  );
}
