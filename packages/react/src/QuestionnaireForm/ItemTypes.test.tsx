// @vitest-environment jsdom
import type { Questionnaire, QuestionnaireResponse } from '@hearth/core';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bundle, mockClient, renderWithHearth, Reply } from '../test/render.js';
import { QuestionnaireForm } from './QuestionnaireForm.js';

const colours = ['Red', 'Orange', 'Yellow', 'Green', 'Blue', 'Indigo', 'Violet'];

/** One question of each item type (hl7.org/fhir/R4/valueset-item-type.html). */
const questionnaire: Questionnaire = {
  resourceType: 'Questionnaire',
  status: 'active',
  item: [
    { linkId: 'str', type: 'string', text: 'Name' },
    { linkId: 'txt', type: 'text', text: 'History' },
    { linkId: 'dec', type: 'decimal', text: 'Weight' },
    { linkId: 'int', type: 'integer', text: 'Children' },
    { linkId: 'dt', type: 'date', text: 'Onset' },
    { linkId: 'dtm', type: 'dateTime', text: 'Seen at' },
    { linkId: 'tm', type: 'time', text: 'Usual bedtime' },
    { linkId: 'url', type: 'url', text: 'Website' },
    { linkId: 'qty', type: 'quantity', text: 'Height' },
    {
      linkId: 'radio',
      type: 'choice',
      text: 'Smoker',
      answerOption: [{ valueString: 'never' }, { valueString: 'former' }, { valueString: 'current' }],
    },
    {
      linkId: 'many',
      type: 'choice',
      text: 'Favourite colour',
      answerOption: colours.map((c) => ({ valueCoding: { system: 'http://example.org/colour', code: c, display: c } })),
    },
    {
      linkId: 'open',
      type: 'open-choice',
      text: 'Pet',
      answerOption: [{ valueCoding: { code: 'cat', display: 'Cat' } }],
    },
    { linkId: 'vs', type: 'choice', text: 'Condition', answerValueSet: 'http://example.org/vs/conditions' },
    {
      linkId: 'ref',
      type: 'reference',
      text: 'Doctor',
      extension: [
        { url: 'http://hl7.org/fhir/StructureDefinition/questionnaire-referenceResource', valueCode: 'Practitioner' },
      ],
    },
    { linkId: 'att', type: 'attachment', text: 'Scan' },
    { linkId: 'alias', type: 'string', text: 'Other names', repeats: true },
  ],
};

describe('QuestionnaireForm item types', () => {
  // Uploads report progress from the streamed body, through the mocked fetch.
  beforeAll(() => vi.stubGlobal('XMLHttpRequest', undefined));
  afterAll(() => vi.unstubAllGlobals());

  it('answers every item type and builds the typed answers', async () => {
    const user = userEvent.setup({ delay: null });
    const { client } = mockClient({
      'GET /fhir/R4/ValueSet/$expand': () => ({
        resourceType: 'ValueSet',
        status: 'active',
        expansion: {
          timestamp: '2024-01-01T00:00:00Z',
          contains: [{ system: 'http://snomed.info/sct', code: '195967001', display: 'Asthma' }],
        },
      }),
      'GET /fhir/R4/Practitioner': () =>
        bundle([{ resourceType: 'Practitioner', id: 'd1', name: [{ given: ['Gregory'], family: 'House' }] }]),
      'POST /fhir/R4/Binary': () => new Reply(201, { resourceType: 'Binary', id: 'b1', contentType: 'image/png' }),
    });
    const onSubmit = vi.fn();
    const { container } = renderWithHearth(
      <QuestionnaireForm questionnaire={questionnaire} onSubmit={onSubmit} />,
      client,
    );

    await user.type(screen.getByLabelText('Name'), 'Ada');
    await user.type(screen.getByLabelText('History'), 'None');
    await user.type(screen.getByLabelText('Weight'), '61.5');
    await user.type(screen.getByLabelText('Children'), '2');
    fireEvent.change(screen.getByLabelText('Onset'), { target: { value: '2024-02-03' } });
    fireEvent.change(screen.getByLabelText('Seen at'), { target: { value: '2024-02-03T10:30' } });
    fireEvent.change(screen.getByLabelText('Usual bedtime'), { target: { value: '22:15' } });
    await user.type(screen.getByLabelText('Website'), 'https://example.org');
    await user.type(screen.getByLabelText('Height'), '170');
    await user.type(screen.getByLabelText('Height unit'), 'cm');
    await user.click(screen.getByRole('radio', { name: 'former' }));
    // More than five options: a searchable select.
    await user.click(screen.getByRole('textbox', { name: 'Favourite colour' }));
    await user.click(await screen.findByRole('option', { name: 'Indigo' }));
    // Open choice: free text when no option fits.
    await user.type(screen.getByRole('textbox', { name: 'Pet' }), 'Axolotl');
    // A value set: looked up with $expand.
    await user.click(screen.getByRole('textbox', { name: 'Condition' }));
    await user.click(await screen.findByRole('option', { name: 'Asthma (195967001)' }));
    // A reference: searched as you type.
    await user.click(screen.getByRole('textbox', { name: 'Doctor' }));
    await user.click(await screen.findByRole('option', { name: 'Gregory House' }));
    await user.upload(
      container.querySelector('input[type="file"]') as HTMLInputElement,
      new File(['png'], 'scan.png', { type: 'image/png' }),
    );
    await screen.findByRole('button', { name: 'scan.png' });
    // A repeating question: a second answer.
    await user.type(screen.getByLabelText('Other names'), 'Countess');
    await user.click(screen.getByRole('button', { name: 'Add answer to Other names' }));
    await user.type(screen.getByLabelText('Other names 2'), 'Enchantress');

    await user.click(screen.getByRole('button', { name: 'Submit' }));
    await waitFor(() => expect(onSubmit).toHaveBeenCalled());
    const response = onSubmit.mock.calls[0][0] as QuestionnaireResponse;
    const answers = Object.fromEntries((response.item ?? []).map((i) => [i.linkId, i.answer]));
    expect(answers.str).toEqual([{ valueString: 'Ada' }]);
    expect(answers.txt).toEqual([{ valueString: 'None' }]);
    expect(answers.dec).toEqual([{ valueDecimal: 61.5 }]);
    expect(answers.int).toEqual([{ valueInteger: 2 }]);
    expect(answers.dt).toEqual([{ valueDate: '2024-02-03' }]);
    expect(answers.dtm?.[0]?.valueDateTime).toMatch(/^2024-02-03T10:30:00[+-]\d\d:\d\d$/);
    expect(answers.tm).toEqual([{ valueTime: '22:15:00' }]);
    expect(answers.url).toEqual([{ valueUri: 'https://example.org' }]);
    expect(answers.qty).toEqual([{ valueQuantity: { value: 170, unit: 'cm' } }]);
    expect(answers.radio).toEqual([{ valueString: 'former' }]);
    expect(answers.many).toEqual([
      { valueCoding: { system: 'http://example.org/colour', code: 'Indigo', display: 'Indigo' } },
    ]);
    expect(answers.open).toEqual([{ valueString: 'Axolotl' }]);
    expect(answers.vs).toEqual([
      { valueCoding: { system: 'http://snomed.info/sct', code: '195967001', display: 'Asthma' } },
    ]);
    expect(answers.ref).toEqual([{ valueReference: { reference: 'Practitioner/d1', display: 'Gregory House' } }]);
    expect(answers.att?.[0]?.valueAttachment).toMatchObject({
      url: 'Binary/b1',
      contentType: 'image/png',
      title: 'scan.png',
    });
    expect(answers.alias).toEqual([{ valueString: 'Countess' }, { valueString: 'Enchantress' }]);
  });

  it('keeps read-only questions from being changed', () => {
    const { client } = mockClient({});
    renderWithHearth(
      <QuestionnaireForm
        questionnaire={{
          resourceType: 'Questionnaire',
          status: 'active',
          item: [{ linkId: 'id', type: 'string', text: 'Record number', readOnly: true }],
        }}
        onSubmit={() => undefined}
      />,
      client,
    );
    expect((screen.getByLabelText('Record number') as HTMLInputElement).disabled).toBe(true);
  });
});
