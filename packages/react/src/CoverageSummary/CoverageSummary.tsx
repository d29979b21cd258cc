import { Text } from '@mantine/core';
import { formatDate, getDisplayString, type Coverage, type Organization, type Resource } from '@hearth/core';
import type { ReactNode } from 'react';
import { useSearch } from '../provider/hooks.js';
import { primaryCoverage } from '../util/billing.js';

export interface CoverageSummaryProps {
  patientId: string;
  /** The day eligibility is shown for (YYYY-MM-DD); today when not given. */
  day?: string;
}

/** 'Acme Health · Member W123 · 1/1/2025 – 12/31/2025': the payer, the member id and the period. */
export function coverageText(coverage: Coverage, payer: Resource | undefined): string {
  const period = coverage.period
    ? `${coverage.period.start ? formatDate(coverage.period.start) : '…'} – ${coverage.period.end ? formatDate(coverage.period.end) : 'ongoing'}`
    : undefined;
  const payerName = (payer ? getDisplayString(payer) : undefined) || coverage.payor?.[0]?.display || 'Unknown payer';
  return [payerName, coverage.subscriberId ? `Member ${coverage.subscriberId}` : undefined, period]
    .filter(Boolean)
    .join(' · ');
}

/**
 * Eligibility at a glance (hl7.org/fhir/R4/coverage.html): the patient's active coverage in force
 * today, with the payer's name, the member id and the period; or that there is none.
 */
export function CoverageSummary({ patientId, day }: CoverageSummaryProps): ReactNode {
  const found = useSearch('Coverage', {
    beneficiary: `Patient/${patientId}`,
    status: 'active',
    _include: 'Coverage:payor',
    _count: '50',
  });
  if (!found.data) return null;
  const resources = (found.data.entry ?? []).map((e) => e.resource as Resource);
  const coverages = resources.filter((r): r is Coverage => r.resourceType === 'Coverage');
  const primary = primaryCoverage(coverages, day ?? new Date().toISOString().slice(0, 10));
  const payer = primary
    ? (resources.find(
        (r) => r.resourceType === 'Organization' && `Organization/${r.id}` === primary.payor?.[0]?.reference,
      ) as Organization | undefined)
    : undefined;
  return (
    <div role="note" aria-label="Coverage">
      {primary ? (
        <Text size="sm">
          <Text span fw={700} size="sm">
            Coverage:
          </Text>{' '}
          {coverageText(primary, payer)}
        </Text>
      ) : (
        // Mantine's orange on white falls short of WCAG AA contrast for small text: bold, not coloured.
        <Text size="sm" fw={700}>
          No active coverage
        </Text>
      )}
    </div>
  );
}
