import { Alert, Badge, Button, Card, Group, List, Stack, Table, Text } from '@mantine/core';
import { formatCodeableConcept, type Claim, type OperationOutcomeIssue } from '@hearth/core';
import { useState, type ReactNode } from 'react';
import { OperationOutcomeAlert } from '../OperationOutcomeAlert/OperationOutcomeAlert.js';
import { useHearth } from '../provider/HearthProvider.js';
import { outcomeOf, useAsync } from '../provider/hooks.js';
import { useAction } from '../provider/use-action.js';
import { claimBalance, claimPdf, formatMoney, saveBlob, submitClaim, validateClaim } from '../util/billing.js';
import { ScrollRegion } from '../util/scroll-region.js';
import { ClaimPaymentForm } from './ClaimPaymentForm.js';
import { BalanceBar } from './BalanceBar.js';
import { ExplanationList } from './ExplanationList.js';

export interface ClaimCardProps {
  claim: Claim;
  /** Called when the claim changed on the server (submitted, answered). */
  onChanged?: () => void;
}

const STATUS_COLOR: Record<string, string> = { draft: 'gray', active: 'blue', cancelled: 'red' };

/** One problem: its text and where it is. */
function ProblemList({ issues }: { issues: OperationOutcomeIssue[] }): ReactNode {
  return (
    <List size="sm" aria-label="Claim problems">
      {issues.map((issue, i) => (
        <List.Item key={i}>
          <Text span size="sm" fw={600} c={issue.severity === 'warning' ? 'orange.9' : 'red.9'}>
            {issue.severity === 'warning' ? 'Warning' : 'Error'}:
          </Text>{' '}
          {issue.details?.text ?? issue.diagnostics}
          {issue.expression?.[0] && (
            <Text span size="xs" c="dimmed">
              {' '}
              ({issue.expression[0]})
            </Text>
          )}
        </List.Item>
      ))}
    </List>
  );
}

/**
 * A claim and what can be done with it: its lines and total, validate (the problems listed with
 * their locations), submit, record the payer's answer, the balance as a bar with the payer's
 * ExplanationOfBenefits (linked), and the CMS-1500 PDF.
 */
export function ClaimCard({ claim, onChanged }: ClaimCardProps): ReactNode {
  const client = useHearth();
  const action = useAction();
  const [problems, setProblems] = useState<OperationOutcomeIssue[] | undefined>(undefined);
  const [paying, setPaying] = useState(false);
  const [version, setVersion] = useState(0);
  const id = claim.id as string;
  const balance = useAsync(
    claim.status === 'active' ? () => claimBalance(client, id) : undefined,
    `${id}/${claim.meta?.versionId ?? ''}/${version}`,
  );
  const validate = () =>
    action.run(async () => {
      setProblems(await validateClaim(client, id));
    });
  const submit = () =>
    action.run(async () => {
      try {
        await submitClaim(client, id);
      } catch (err) {
        const outcome = outcomeOf(err);
        if (outcome?.issue?.some((i) => i.expression?.length)) {
          setProblems(outcome.issue);
          return;
        }
        throw err;
      }
      setProblems(undefined);
      client.invalidateSearches('Claim');
      client.invalidateSearches('ChargeItem');
      onChanged?.();
    });
  const download = () =>
    action.run(async () => {
      saveBlob(await claimPdf(client, id), `claim-${id}.pdf`);
    });
  return (
    <Card withBorder padding="sm" component="section" aria-label={`Claim ${id}`}>
      <Stack gap="xs">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <Group gap="xs">
            <Text fw={600}>Claim</Text>
            <Badge variant="light" color={STATUS_COLOR[claim.status] ?? 'gray'}>
              {claim.status === 'active' ? 'submitted' : claim.status}
            </Badge>
          </Group>
          <Text fw={600}>Total {formatMoney(claim.total)}</Text>
        </Group>
        <ScrollRegion label={`Lines of claim ${id}`}>
          <Table miw={420} striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>#</Table.Th>
                <Table.Th>Service</Table.Th>
                <Table.Th>Units</Table.Th>
                <Table.Th>Unit price</Table.Th>
                <Table.Th>Net</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(claim.item ?? []).map((item) => (
                <Table.Tr key={item.sequence}>
                  <Table.Td>{item.sequence}</Table.Td>
                  <Table.Td>
                    {item.productOrService.coding?.[0]?.code} {formatCodeableConcept(item.productOrService)}
                  </Table.Td>
                  <Table.Td>{item.quantity?.value ?? 1}</Table.Td>
                  <Table.Td>{formatMoney(item.unitPrice)}</Table.Td>
                  <Table.Td>{formatMoney(item.net)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollRegion>
        {problems &&
          (problems.length ? (
            <Alert color="red" title="The claim has problems" role="alert">
              <ProblemList issues={problems} />
            </Alert>
          ) : (
            <Alert color="green" role="status">
              The claim is valid
            </Alert>
          ))}
        {claim.status === 'active' && balance.data && (
          <>
            <BalanceBar balance={balance.data} />
            <ExplanationList explanations={balance.data.explanations} />
          </>
        )}
        <OperationOutcomeAlert error={action.error ?? balance.error} />
        <Group gap="xs" wrap="wrap">
          {claim.status === 'draft' && (
            <>
              <Button size="xs" variant="default" onClick={validate} loading={action.busy}>
                Validate claim
              </Button>
              <Button size="xs" onClick={submit} loading={action.busy}>
                Submit claim
              </Button>
            </>
          )}
          {claim.status === 'active' && !paying && (
            <Button size="xs" variant="light" onClick={() => setPaying(true)}>
              Record payer response
            </Button>
          )}
          <Button size="xs" variant="default" onClick={download} loading={action.busy}>
            Download PDF
          </Button>
        </Group>
        {paying && (
          <ClaimPaymentForm
            claim={claim}
            onCancel={() => setPaying(false)}
            onSaved={() => {
              setPaying(false);
              setVersion((v) => v + 1);
              onChanged?.();
            }}
          />
        )}
      </Stack>
    </Card>
  );
}
