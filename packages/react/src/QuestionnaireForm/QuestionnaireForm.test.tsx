// @vitest-environment jsdom
import type { Questionnaire, QuestionnaireResponse } from '@hearth/core';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { mockClient, renderWithHearth } from '../test/render.js';
import { collectAnswers, isEnabled } from './logic.js';
import { QuestionnaireForm } from './QuestionnaireForm.js';

const questionnaire: Questionnaire = {
  resourceType: 'Questionnaire',
  id: 'q1',
  status: 'active',
  title: 'Visit',
  item: [
    { linkId: 'intro', type: 'display', text: 'Tell us about your visit.' },
    { linkId: 'pain', type: 'boolean', text: 'In pain?' },
    {
      linkId: 'level',
      type: 'integer',
      text: 'Pain level',
      required: true,
      enableWhen: [{ question: 'pain', operator: '=', answerBoolean: true }],
    },
    {
      linkId: 'symptoms',
      type: 'choice',
      text: 'Symptoms',
      repeats: true,
      answerOption: [
        { valueCoding: { code: 'cough', display: 'Cough' } },
        { valueCoding: { code: 'fever', display: 'Fever' } },
      ],
    },
    {
      linkId: 'med',
      type: 'group',
      text: 'Medication',
      repeats: true,
      item: [{ linkId: 'med-name', type: 'string', text: 'Medication name' }],
    },
    { linkId: 'notes', type: 'text', text: 'Notes', initial: [{ valueString: 'none' }] },
  ],
};

describe('QuestionnaireForm', () => {
  it('shows enableWhen items only while their condition holds and builds the response', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn();
    renderWithHearth(
      <QuestionnaireForm questionnaire={questionnaire} subject={{ reference: 'Patient/p1' }} onSubmit={onSubmit} />,
      client,
    );
    expect(screen.getByText('Tell us about your visit.')).toBeTruthy();
    expect(screen.queryByLabelText('Pain level')).toBeNull();
    await user.click(screen.getByLabelText('In pain?'));
    // Required and enabled: submitting without it is refused.
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(screen.getByText('An answer is required')).toBeTruthy();
    expect(onSubmit).not.toHaveBeenCalled();
    await user.type(screen.getByLabelText(/Pain level/), '7');
    await user.click(screen.getByLabelText('Cough'));
    await user.click(screen.getByLabelText('Fever'));
    await user.type(screen.getByLabelText('Medication name'), 'Ibuprofen');
    await user.click(screen.getByRole('button', { name: 'Add Medication' }));
    await user.type(screen.getAllByLabelText('Medication name')[1], 'Paracetamol');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    const response = onSubmit.mock.calls[0][0] as QuestionnaireResponse;
    expect(response).toMatchObject({
      resourceType: 'QuestionnaireResponse',
      status: 'completed',
      questionnaire: 'Questionnaire/q1',
      subject: { reference: 'Patient/p1' },
    });
    expect(response.item).toEqual([
      { linkId: 'pain', text: 'In pain?', answer: [{ valueBoolean: true }] },
      { linkId: 'level', text: 'Pain level', answer: [{ valueInteger: 7 }] },
      {
        linkId: 'symptoms',
        text: 'Symptoms',
        answer: [
          { valueCoding: { code: 'cough', display: 'Cough' } },
          { valueCoding: { code: 'fever', display: 'Fever' } },
        ],
      },
      {
        linkId: 'med',
        text: 'Medication',
        item: [{ linkId: 'med-name', text: 'Medication name', answer: [{ valueString: 'Ibuprofen' }] }],
      },
      {
        linkId: 'med',
        text: 'Medication',
        item: [{ linkId: 'med-name', text: 'Medication name', answer: [{ valueString: 'Paracetamol' }] }],
      },
      { linkId: 'notes', text: 'Notes', answer: [{ valueString: 'none' }] },
    ]);
  });

  it('drops answers of items that became disabled', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({});
    const onSubmit = vi.fn();
    renderWithHearth(<QuestionnaireForm questionnaire={questionnaire} onSubmit={onSubmit} />, client);
    await user.click(screen.getByLabelText('In pain?'));
    await user.type(screen.getByLabelText(/Pain level/), '3');
    await user.click(screen.getByLabelText('In pain?'));
    expect(screen.queryByLabelText(/Pain level/)).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    expect((onSubmit.mock.calls[0][0] as QuestionnaireResponse).item?.map((i) => i.linkId)).toEqual(['pain', 'notes']);
  });

  it('evaluates enableWhen operators and enableBehavior', () => {
    const answers = collectAnswers([
      { linkId: 'age', answer: [{ valueInteger: 70 }] },
      {
        linkId: 'sex',
        answer: [{ valueCoding: { system: 'http://hl7.org/fhir/administrative-gender', code: 'female' } }],
      },
    ]);
    const item = (enableWhen: object[], enableBehavior?: 'all' | 'any') =>
      ({ linkId: 'x', type: 'string', enableWhen, enableBehavior }) as never;
    expect(isEnabled(item([{ question: 'age', operator: '>=', answerInteger: 65 }]), answers)).toBe(true);
    expect(isEnabled(item([{ question: 'age', operator: '<', answerInteger: 65 }]), answers)).toBe(false);
    expect(isEnabled(item([{ question: 'sex', operator: '=', answerCoding: { code: 'female' } }]), answers)).toBe(true);
    expect(isEnabled(item([{ question: 'sex', operator: '!=', answerCoding: { code: 'female' } }]), answers)).toBe(
      false,
    );
    expect(isEnabled(item([{ question: 'missing', operator: 'exists', answerBoolean: false }]), answers)).toBe(true);
    expect(isEnabled(item([{ question: 'missing', operator: 'exists', answerBoolean: true }]), answers)).toBe(false);
    const both = [
      { question: 'age', operator: '<', answerInteger: 65 },
      { question: 'sex', operator: '=', answerCoding: { code: 'female' } },
    ];
    expect(isEnabled(item(both, 'all'), answers)).toBe(false);
    expect(isEnabled(item(both, 'any'), answers)).toBe(true);
  });
});
