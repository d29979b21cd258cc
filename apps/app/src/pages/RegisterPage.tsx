import { Group, PasswordInput, Stack, TextInput } from '@mantine/core';
import { computeCodeChallenge, generateCodeVerifier } from '@hearth/core';
import { useAction, useHearthContext } from '@hearth/react';
import type { ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { AuthLayout, AuthLink } from '../components/AuthLayout.js';
import { useFields } from '../use-fields.js';
import { FormSubmit } from '../components/FormSubmit.js';

/** Register: a new user (POST /auth/newuser), then their new project (POST /auth/newproject), signed in. */
export function RegisterPage(): ReactNode {
  const { client, refreshSession } = useHearthContext();
  const navigate = useNavigate();
  const form = useFields({
    firstName: '',
    lastName: '',
    email: '',
    password: '',
    projectName: '',
  });
  const { busy, error, submit } = useAction();
  return (
    <AuthLayout title="Register a new project">
      <form
        onSubmit={submit(async () => {
          const codeVerifier = generateCodeVerifier();
          const codeChallenge = await computeCodeChallenge(codeVerifier);
          const { projectName, ...user } = form.values;
          const { login } = await client.post<{ login: string }>(
            'auth/newuser',
            { ...user, email: user.email.trim(), codeChallenge, codeChallengeMethod: 'S256' },
            'application/json',
            { noAuth: true },
          );
          const { code } = await client.post<{ login: string; code: string }>(
            'auth/newproject',
            { login, projectName },
            'application/json',
            { noAuth: true },
          );
          await client.processCode(code, { codeVerifier });
          await refreshSession();
          navigate('/');
        })}
      >
        <Stack>
          <Group grow>
            <TextInput label="First name" required autoComplete="given-name" {...form.text('firstName')} />
            <TextInput label="Last name" required autoComplete="family-name" {...form.text('lastName')} />
          </Group>
          <TextInput label="Email" type="email" required autoComplete="email" {...form.text('email')} />
          <PasswordInput
            label="Password"
            required
            autoComplete="new-password"
            description="At least 8 characters"
            {...form.text('password')}
          />
          <TextInput label="Project name" required {...form.text('projectName')} />
          <FormSubmit busy={busy} error={error}>
            Create account
          </FormSubmit>
          <AuthLink prompt="Already registered?" to="/signin">
            Sign in
          </AuthLink>
        </Stack>
      </form>
    </AuthLayout>
  );
}
