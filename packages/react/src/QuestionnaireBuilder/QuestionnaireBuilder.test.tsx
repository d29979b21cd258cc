// @vitest-environment jsdom
import type { Questionnaire } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { QuestionnaireBuilder } from './QuestionnaireBuilder.js';

describe('QuestionnaireBuilder', () => {
  it('builds items with types, options and enableWhen, and previews them', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn();
    renderWithHearth(
      <QuestionnaireBuilder defaultValue={{ resourceType: 'Questionnaire', status: 'draft' }} onSubmit={onSubmit} />,
      client,
    );
    await user.type(screen.getByLabelText('Title'), 'Screening');
    await user.click(screen.getByRole('button', { name: 'Add item' }));
    await user.type(screen.getByLabelText('Text'), 'Smoker?');
    await user.click(screen.getByRole('textbox', { name: 'Type' }));
    await user.click(await screen.findByRole('option', { name: 'boolean' }));
    await user.click(screen.getByRole('button', { name: 'Add item' }));
    const texts = screen.getAllByLabelText('Text');
    await user.type(texts[1], 'Packs');
    const conditions = screen.getAllByRole('textbox', { name: 'Enable when question' });
    await user.click(conditions[1]);
    await user.click(await screen.findByRole('option', { name: 'q1' }));
    await user.type(screen.getByLabelText(/^Answer/), 'true');
    await user.click(screen.getByRole('button', { name: 'Save questionnaire' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    const saved = onSubmit.mock.calls[0][0] as Questionnaire;
    expect(saved.title).toBe('Screening');
    expect(saved.item).toEqual([
      { linkId: 'q1', type: 'boolean', text: 'Smoker?' },
      {
        linkId: 'q2',
        type: 'string',
        text: 'Packs',
        enableWhen: [{ question: 'q1', operator: '=', answerBoolean: true }],
      },
    ]);
    await user.click(screen.getByRole('tab', { name: 'Preview' }));
    expect(await screen.findByLabelText('Smoker?')).toBeTruthy();
    expect(screen.queryByLabelText('Packs')).toBeNull();
    await user.click(screen.getByLabelText('Smoker?'));
    expect(screen.getByLabelText('Packs')).toBeTruthy();
  });
});
